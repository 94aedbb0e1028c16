import { describe, expect, it } from "vitest";
import { REPEAT_WINDOW_DAYS } from "../../src/campaigns/earlier-payments.js";
import { importStages } from "../../src/import/import-stages.js";

/**
 * importCampaign's options turned once into each stage's values (src/import/import-stages.ts):
 * the defaults the stages rely on are applied there, and each value holds its stage's flags.
 */
describe("importStages", () => {
  it("applies the defaults of a bare import", () => {
    const stages = importStages({ file: "o.csv", campaign: "spring" });
    expect(stages.recording).toMatchObject({
      campaign: "spring",
      append: false,
      hold: false,
      executionMode: "async",
      repeats: "refuse",
      repeatWindowDays: REPEAT_WINDOW_DAYS,
    });
    expect(stages.pricing).toMatchObject({ budgets: [], balanceCheck: true });
    expect(stages.run).toMatchObject({ dryRun: false, skipInvalid: false });
    expect(stages.header.emailOptional).toBe(false);
    expect(stages.validation.row.decimalComma).toBe(false);
  });

  it("gives each stage its own flags", () => {
    const onHeader = () => {};
    const stages = importStages({
      file: "o.xlsx",
      campaign: "spring",
      sheet: "Orders",
      maxUnzippedBytes: 1024,
      map: { "E-mail": "email" },
      header: { headerRow: 3, strictColumns: true, onHeader },
      distribution: "link",
      currency: "EUR",
      defaultTemplateId: "tpl",
      fromReport: true,
      balanceCheck: false,
      budgets: [{ amount: "10", currency: "EUR" }],
    });
    expect(stages.read).toEqual({
      file: "o.xlsx",
      delimiter: undefined,
      sheet: "Orders",
      maxUnzippedBytes: 1024,
    });
    expect(stages.header).toEqual({
      map: { "E-mail": "email" },
      emailOptional: true,
      headerRow: 3,
      strictColumns: true,
      onHeader,
    });
    expect(stages.validation.risky).toEqual({
      file: "o.xlsx",
      allowExample: undefined,
      fromReport: true,
    });
    expect(stages.validation.row).toMatchObject({
      defaultTemplateId: "tpl",
      defaultDistribution: "link",
      defaultCurrency: "EUR",
    });
    expect(stages.validation.preflight).toEqual({ currency: "EUR" });
    expect(stages.pricing).toMatchObject({
      budgets: [{ amount: "10", currency: "EUR" }],
      balanceCheck: false,
    });
  });

  it("assumes a decimal comma in a ';' file and says so once", () => {
    const told: boolean[] = [];
    const { validation } = importStages({
      file: "o.csv",
      campaign: "spring",
      delimiter: ";",
      onDecimalComma: (assumed) => told.push(assumed),
    });
    expect(validation.row.decimalComma).toBe("either");
    validation.row.onDecimalComma?.();
    validation.row.onDecimalComma?.();
    expect(told).toEqual([true]);
  });

  it("--no-decimal-comma refuses the assumption", () => {
    const { validation } = importStages({
      file: "o.csv",
      campaign: "spring",
      delimiter: ";",
      decimalComma: false,
    });
    expect(validation.row.decimalComma).toBe(false);
  });
});

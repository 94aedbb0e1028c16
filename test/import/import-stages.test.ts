import { describe, expect, it } from "vitest";
import { REPEAT_WINDOW_DAYS } from "../../src/campaigns/earlier-payments.js";
import { importStages } from "../../src/import/import-flags.js";

/**
 * importCampaign's options (the command's flags) parsed by the command's own schema into each
 * stage's values (src/import/import-flags.ts): the defaults the stages rely on are applied there,
 * and each value holds its stage's flags.
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
      maxUnzippedMb: 2,
      map: ["E-mail=email"],
      headerRow: 3,
      strictColumns: true,
      onHeader,
      distribution: "link",
      currency: "EUR",
      templateId: "tpl",
      fromReport: true,
      balanceCheck: false,
      budget: ["10:eur"],
    });
    expect(stages.read).toEqual({
      file: "o.xlsx",
      delimiter: undefined,
      sheet: "Orders",
      maxUnzippedBytes: 2 * 2 ** 20,
    });
    expect(stages.header).toEqual({
      map: { "E-mail": "email" },
      emailOptional: true,
      headerRow: 3,
      strictColumns: true,
      onHeader,
      onTotalsRow: undefined,
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

  it("takes the settings' defaults, and the library's own values, beside the flags", () => {
    const stages = importStages({
      file: "o.csv",
      campaign: "spring",
      skipInvalid: true,
      allowRepeats: true,
      actor: "alice",
      jobOptions: { attempts: 3 },
      settings: {
        templateId: "tpl-set",
        requireApproval: true,
        repeatWindowDays: 7,
        dataDir: "/data",
        approvalThreshold: { USD: "1000.00" },
      },
    });
    expect(stages.recording).toMatchObject({
      hold: true,
      repeats: "allow",
      repeatWindowDays: 7,
      actor: "alice",
      jobOptions: { attempts: 3 },
    });
    expect(stages.validation.row.defaultTemplateId).toBe("tpl-set");
    expect(stages.pricing.approvalThreshold).toEqual({ USD: "1000.00" });
    expect(stages.run.errorFile).toMatch(/^\/data\/campaigns\/spring\/invalid-rows-.*\.csv$/);
  });

  it("refuses a name that is no option, where the schema would drop it", () => {
    const spread = { repeats: "allow" } as object;
    expect(() => importStages({ file: "o.csv", campaign: "spring", ...spread })).toThrow(
      "importCampaign: no option repeats",
    );
  });

  it("refuses a bad value naming its flag, as the command does", () => {
    expect(() => importStages({ file: "o.csv", campaign: "spring", budget: ["ten"] })).toThrow(
      /^--budget "ten": /,
    );
    expect(() => importStages({ file: "o.csv", campaign: "spring", catalogCheck: false })).toThrow(
      /--no-catalog-check needs --currency/,
    );
  });
});

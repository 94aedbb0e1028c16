import { describe, expect, it } from "vitest";
import { RowPreflight } from "../../../src/import/validation/row-preflight.js";
import { validateRow } from "../../../src/import/validation/row-validation.js";
import { catalogIndexOf, indexEntry } from "../../helpers/catalog-index.js";

/** docs/order-files.md, "Every problem of a row": the catalog's checks go on after a problem. */
const catalog = catalogIndexOf(
  indexEntry("OPEN"),
  indexEntry("EURO", { currency: "EUR" }),
  indexEntry("DOWN", { state: "TEMPORARILY_DISABLED" }),
  indexEntry("CARD", { payout_type: "gift_card" }),
);

function columnsOf(fields: Record<string, string>, currency?: string) {
  const validation = validateRow({ line: 3, fields });
  const preflight = new RowPreflight(catalog, { currency });
  const own = validation.ok ? [] : validation.errors;
  const row = validation.ok ? validation.row : validation.partial;
  const named = new Set(own.map((e) => e.column));
  const more = row ? preflight.problems(row).filter((e) => !named.has(e.column)) : [];
  return [...own, ...more].map((e) => `${e.column}: ${e.message}`);
}

describe("every problem of a row", () => {
  it("a refused row still has its product checked against the catalog", () => {
    const validation = validateRow({
      line: 3,
      fields: { email: "x", product_code: "NOPE", face_value: "ten" },
    });
    expect(validation).toMatchObject({
      ok: false,
      partial: { product_code: "NOPE", face_value: "" },
    });
    expect(columnsOf({ email: "x", product_code: "NOPE", face_value: "ten" })).toEqual([
      expect.stringMatching(/^email: /),
      expect.stringMatching(/^face_value: face_value must be a plain decimal/),
      expect.stringMatching(/^product_code: unknown product code NOPE/),
    ]);
  });

  it("a product not LIVE, of another currency, and a face value out of its range: all three", () => {
    const problems = new RowPreflight(catalog, { currency: "EUR" }).check({
      line: 4,
      email: "a@example.com",
      product_code: "DOWN",
      face_value: "9000",
      template_source: "none",
      metadata: {},
    });
    expect(problems.ok).toBe(false);
    const columns = problems.ok ? [] : problems.errors.map((e) => e.column);
    expect(columns).toEqual(["product_code", "product_code", "face_value"]);
  });

  it("a valid face value of a refused row is checked too; a refused one is not again", () => {
    expect(columnsOf({ email: "x", product_code: "OPEN", face_value: "9000" })).toEqual([
      expect.stringMatching(/^email: /),
      expect.stringMatching(/^face_value: face_value 9000 is outside OPEN's range/),
    ]);
    expect(columnsOf({ email: "x", product_code: "OPEN", face_value: "-1" })).toHaveLength(2);
  });

  it("a choice of products names each unknown code and its face value's problem", () => {
    const problems = columnsOf({
      email: "a@example.com",
      product_codes: "NOPE1|OPEN|NOPE2",
      face_value: "1",
    });
    expect(problems).toEqual([
      expect.stringMatching(/^product_codes: unknown product code NOPE1/),
      expect.stringMatching(/^product_codes: unknown product code NOPE2/),
      expect.stringMatching(/^face_value: face_value 1 is below OPEN's minimum 5 USD$/),
    ]);
  });

  it("a currency cell of the wrong currency is named beside a bad e-mail", () => {
    expect(
      columnsOf({ email: "x", product_code: "EURO", face_value: "10", currency: "USD" }),
    ).toEqual([
      expect.stringMatching(/^email: /),
      "currency: product EURO is sold in EUR, not USD",
    ]);
  });

  it("a good row still passes, priced", () => {
    const validation = validateRow({
      line: 2,
      fields: { email: "a@example.com", product_code: "OPEN", face_value: "25" },
    });
    expect(validation.ok).toBe(true);
    if (!validation.ok) return;
    expect(new RowPreflight(catalog).check(validation.row)).toMatchObject({
      ok: true,
      price: "24.67",
    });
  });
});

// The distribution and product-choice cells of a row: validateRow reads them, RowPreflight checks
// them against the catalog snapshot; every problem names its line and column.
import { describe, expect, it } from "vitest";
import { resolveHeader } from "../../../src/import/header/header.js";
import { RowPreflight } from "../../../src/import/validation/row-preflight.js";
import {
  type ValidateRowOptions,
  validateRow,
} from "../../../src/import/validation/row-validation.js";
import { catalogIndexOf, indexEntry } from "../../helpers/catalog-index.js";

const BASE = { email: "jane@example.com", product_code: "", face_value: "25" };

function validate(fields: Record<string, string>, options: ValidateRowOptions = {}) {
  return validateRow({ line: 7, fields: { ...BASE, product_code: "GIFT", ...fields } }, options);
}

function errorsOf(fields: Record<string, string>, options: ValidateRowOptions = {}) {
  const result = validate(fields, options);
  return result.ok ? [] : result.errors;
}

const catalog = catalogIndexOf(
  indexEntry("GIFT"),
  indexEntry("GIFT2", { denominations: { type: "fixed", list: ["50", "20"] } }),
  indexEntry("EURO", { currency: "EUR" }),
  indexEntry("PAY", {
    payout_type: "payment",
    denominations: { type: "open", min: "1", max: "900" },
  }),
  indexEntry("PAY2", { payout_type: "payment" }),
  indexEntry("OFF", { is_orderable: false }),
);

function preflight(fields: Record<string, string>, options: ValidateRowOptions = {}) {
  const result = validate(fields, options);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return new RowPreflight(catalog, { currency: options.defaultCurrency }).check(result.row);
}

function preflightErrors(fields: Record<string, string>, options: ValidateRowOptions = {}) {
  const result = preflight(fields, options);
  return result.ok ? [] : result.errors;
}

describe("distribution cells", () => {
  it("reads link, recipient and email in any case, the default when empty", () => {
    expect(validate({ email: "", distribution: "LINK" })).toMatchObject({
      ok: true,
      row: { distribution: "link", email: "" },
    });
    const linkByDefault = validate({ email: "" }, { defaultDistribution: "link" });
    expect(linkByDefault).toMatchObject({ ok: true, row: { distribution: "link" } });
    const email = validate({ distribution: "Email" }, { defaultDistribution: "link" });
    expect(email.ok && email.row).not.toHaveProperty("distribution");
    expect(errorsOf({ distribution: "sms" })).toEqual([
      {
        line: 7,
        column: "distribution",
        message: 'distribution must be email, link, recipient (got "sms")',
      },
    ]);
  });

  it("refuses an e-mail on a link row, naming the line and column", () => {
    const [error] = errorsOf({ distribution: "link" });
    expect(error).toMatchObject({ line: 7, column: "email" });
    expect(error?.message).toMatch(/email must be empty on a link row.*orders links/);
  });

  it("needs a recipient reference by the service's rule, on recipient rows only", () => {
    expect(
      validate({ distribution: "recipient", recipient_reference: " emp-42@acme.io " }),
    ).toMatchObject({
      ok: true,
      row: { distribution: "recipient", recipient_reference: "emp-42@acme.io" },
    });
    expect(errorsOf({ distribution: "recipient" })).toEqual([
      {
        line: 7,
        column: "recipient_reference",
        message: "recipient_reference is required on a recipient row",
      },
    ]);
    expect(errorsOf({ distribution: "recipient", recipient_reference: "a b" })[0]?.message).toMatch(
      /only letters, digits and - _ @ \./,
    );
    const long = "x".repeat(256);
    expect(errorsOf({ distribution: "recipient", recipient_reference: long })[0]?.message).toBe(
      "recipient_reference is longer than 255 characters",
    );
    expect(errorsOf({ recipient_reference: "r1" })[0]).toMatchObject({
      column: "recipient_reference",
      message: expect.stringMatching(/only read on a recipient row/),
    });
    expect(
      errorsOf({ distribution: "recipient", recipient_reference: "r", email: "" })[0],
    ).toMatchObject({ column: "email", message: "email is required" });
  });
});

describe("product choice cells", () => {
  it("reads product_codes between '|' and a selection template with its currency", () => {
    expect(
      validate({ product_code: "", product_codes: "GIFT | GIFT2", face_value: "50" }),
    ).toMatchObject({
      ok: true,
      row: { product_code: "", product_codes: ["GIFT", "GIFT2"] },
    });
    expect(
      validate({
        product_code: "",
        selection_template_id: "PT-1",
        currency: "usd",
        face_value: "50",
      }),
    ).toMatchObject({
      ok: true,
      row: { selection_template_id: "PT-1", currency: "USD", currency_source: "row" },
    });
    const fromFlag = validate(
      { product_code: "", selection_template_id: "PT-1", face_value: "50" },
      { defaultCurrency: "EUR" },
    );
    expect(fromFlag).toMatchObject({
      ok: true,
      row: { currency: "EUR", currency_source: "default" },
    });
  });

  it("takes exactly one of product_code, product_codes and selection_template_id", () => {
    expect(errorsOf({ product_code: "" })[0]).toMatchObject({ column: "product_code" });
    expect(errorsOf({ product_codes: "A|B" })).toEqual([
      {
        line: 7,
        column: "product_codes",
        message:
          "give one of product_code, product_codes and selection_template_id " +
          "(this row has product_code and product_codes)",
      },
    ]);
  });

  it("refuses a choice of one code, an empty or repeated code, and a face value with cents", () => {
    const codes = (value: string) =>
      errorsOf({ product_code: "", product_codes: value }).map((e) => [e.column, e.message]);
    expect(codes("A")[0]?.[1]).toMatch(/two or more codes separated by '\|'/);
    expect(codes("A||B")[0]?.[1]).toMatch(/an empty code/);
    expect(codes("A|B|A")[0]?.[1]).toBe('product_codes names "A" twice');
    expect(errorsOf({ product_code: "", product_codes: "A|B", face_value: "10.50" })).toEqual([
      {
        line: 7,
        column: "face_value",
        message: "face_value must be a whole number for a choice of products (got 10.50)",
      },
    ]);
    expect(validate({ product_code: "", product_codes: "A|B", face_value: "10.00" }).ok).toBe(true);
    // A face value that is no plain decimal is said once, as on any row.
    for (const face of ["abc", "-5", "1e3", "0"]) {
      const errors = errorsOf({ product_code: "", product_codes: "A|B", face_value: face });
      expect(
        errors.map((e) => e.column),
        face,
      ).toEqual(["face_value"]);
    }
  });

  it("needs a template's currency, and refuses a recipient row with a template", () => {
    const [missing] = errorsOf({ product_code: "", selection_template_id: "PT-1" });
    expect(missing).toMatchObject({ line: 7, column: "currency" });
    expect(missing?.message).toMatch(/add a currency column or pass --currency/);
    expect(errorsOf({ currency: "dollars" })[0]?.message).toMatch(/3-letter code/);
    const recipient = errorsOf({
      distribution: "recipient",
      recipient_reference: "r1",
      product_code: "",
      selection_template_id: "PT-1",
      currency: "USD",
    });
    expect(recipient).toEqual([
      expect.objectContaining({
        column: "distribution",
        message: expect.stringMatching(/payment products only/),
      }),
    ]);
  });
});

describe("preflight of choices and distributions", () => {
  it("prices a choice at its face value, in its products' currency", () => {
    expect(preflight({ product_code: "", product_codes: "GIFT|GIFT2", face_value: "20" })).toEqual({
      ok: true,
      currency: "USD",
      priceUnits: 2000n,
      price: "20.00",
      faceUnits: 2000n,
    });
    const template = preflight({
      product_code: "",
      selection_template_id: "PT-1",
      currency: "EUR",
    });
    expect(template).toMatchObject({ ok: true, currency: "EUR", price: "25.00" });
  });

  it("refuses a choice below a product's minimum, of two currencies, or of an unknown code", () => {
    expect(
      preflightErrors({ product_code: "", product_codes: "GIFT|GIFT2", face_value: "10" }),
    ).toEqual([
      { line: 7, column: "face_value", message: "face_value 10 is below GIFT2's minimum 20 USD" },
    ]);
    expect(preflightErrors({ product_code: "", product_codes: "GIFT|EURO" })[0]).toMatchObject({
      column: "product_codes",
      message: expect.stringMatching(/EURO is sold in EUR .* one currency/),
    });
    expect(preflightErrors({ product_code: "", product_codes: "GIFT|NOPE" })[0]).toMatchObject({
      column: "product_codes",
    });
    expect(preflightErrors({ product_code: "", product_codes: "GIFT|OFF" })[0]?.message).toMatch(
      /OFF is not orderable/,
    );
  });

  it("pays a recipient in payment products only", () => {
    const recipient = { distribution: "recipient", recipient_reference: "r1" };
    expect(preflight({ ...recipient, product_code: "PAY" }).ok).toBe(true);
    expect(preflight({ ...recipient, product_code: "", product_codes: "PAY|PAY2" }).ok).toBe(true);
    expect(preflightErrors({ ...recipient, product_code: "GIFT" })).toEqual([
      {
        line: 7,
        column: "distribution",
        message:
          "product GIFT is a gift_card product: the service pays a recipient " +
          "(distribution recipient) in payment products only",
      },
    ]);
    expect(
      preflightErrors({ ...recipient, product_code: "", product_codes: "PAY|GIFT" })[0],
    ).toMatchObject({
      column: "distribution",
    });
  });

  it("checks a currency cell against the product's currency and --currency", () => {
    expect(preflight({ currency: "usd" }).ok).toBe(true);
    expect(preflightErrors({ currency: "EUR" })).toEqual([
      { line: 7, column: "currency", message: "product GIFT is sold in USD, not EUR" },
    ]);
    const template = { product_code: "", selection_template_id: "PT-1", currency: "EUR" };
    expect(preflightErrors(template, { defaultCurrency: "USD" })).toEqual([
      { line: 7, column: "currency", message: "currency EUR is not USD (--currency)" },
    ]);
  });
});

describe("the header of such files", () => {
  it("needs no product_code column beside a choice column, nor email beside distribution", () => {
    expect(resolveHeader(["email", "product_codes", "face_value"]).ok).toBe(true);
    expect(resolveHeader(["email", "Selection Template", "face_value", "Currency"]).ok).toBe(true);
    expect(resolveHeader(["Distribution", "product_code", "face_value"]).ok).toBe(true);
    expect(resolveHeader(["product_code", "face_value"], { emailOptional: true }).ok).toBe(true);
    expect(resolveHeader(["product_code", "face_value"])).toMatchObject({
      ok: false,
      errors: [
        { column: "email", message: expect.stringMatching(/^missing required column email;/) },
      ],
    });
  });
});

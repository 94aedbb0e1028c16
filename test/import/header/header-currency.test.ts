import { describe, expect, it } from "vitest";
import { knownColumns, resolveHeader } from "../../../src/import/header/header.js";
import { splitHeaderCurrency } from "../../../src/import/header/header-currency.js";

// The currency in a header (docs/order-files.md, "The currency in a header").

describe("a currency in a header", () => {
  it("reads a code or symbol in brackets or after a space", () => {
    expect(splitHeaderCurrency("Amount (USD)")).toEqual({ base: "Amount", currency: "USD" });
    expect(splitHeaderCurrency("Value EUR")).toEqual({ base: "Value", currency: "EUR" });
    expect(splitHeaderCurrency("Betrag (€)")).toEqual({ base: "Betrag", currency: "EUR" });
    expect(splitHeaderCurrency("Face Value [jpy]")).toEqual({
      base: "Face Value",
      currency: "JPY",
    });
    expect(splitHeaderCurrency("Amount £")).toEqual({ base: "Amount", currency: "GBP" });
  });

  it("reads `$` as no currency, and a lower-case word after a space as no code", () => {
    expect(splitHeaderCurrency("Amount ($)")).toEqual({ base: "Amount", currency: undefined });
    expect(splitHeaderCurrency("Value all")).toBeUndefined();
    expect(splitHeaderCurrency("Amount (net)")).toBeUndefined();
    expect(splitHeaderCurrency("Amount")).toBeUndefined();
  });

  it("makes the column the face value, with its currency, and counts it as a known header", () => {
    const resolved = resolveHeader(["Email", "Product Code", "Amount (USD)"]);
    expect(resolved).toMatchObject({ ok: true, fields: ["email", "product_code", "face_value"] });
    expect(resolved.ok && resolved.renamed.at(-1)).toEqual({
      source: "Amount (USD)",
      field: "face_value",
      by: "synonym",
      currency: "USD",
    });
    expect(knownColumns(["Email", "Betrag (€)"])).toBe(2);
  });

  it("leaves a currency after another field's header unread", () => {
    const resolved = resolveHeader(["email", "product_code", "face_value", "Fee (USD)"]);
    expect(resolved).toMatchObject({ ok: true, ignored: [{ index: 3, name: "Fee (USD)" }] });
  });
});

import { describe, expect, it } from "vitest";
import { validateRow } from "../../src/import/validation/row-validation.js";
import { parseSendAt } from "../../src/orders/send-at.js";

const NOW = Date.parse("2026-11-23T12:00:00Z");

describe("send_at", () => {
  it("reads a date as 00:00 UTC, and a date-time with its zone", () => {
    expect(parseSendAt("2026-12-24", NOW)).toEqual({ at: Date.parse("2026-12-24T00:00:00Z") });
    expect(parseSendAt("2026-12-24T09:30Z", NOW)).toEqual({ at: Date.parse("2026-12-24T09:30Z") });
    expect(parseSendAt("2026-12-24 09:30:15.5+01:00", NOW)).toEqual({
      at: Date.parse("2026-12-24T08:30:15.500Z"),
    });
    // A time already past means at once.
    expect(parseSendAt("2020-01-01", NOW)).toEqual({ at: Date.parse("2020-01-01T00:00Z") });
  });

  it("refuses a clock time without a zone, a date that does not exist, and more than 90 days ahead", () => {
    expect(parseSendAt("2026-12-24T09:30", NOW)).toEqual({
      error: expect.stringContaining("has no time zone: add Z for UTC or an offset"),
    });
    expect(parseSendAt("2026-02-30", NOW)).toEqual({
      error: 'send_at "2026-02-30" is not a real date and time',
    });
    expect(parseSendAt("24/12/2026", NOW)).toEqual({
      error: expect.stringMatching(/^send_at must be an ISO date/),
    });
    expect(parseSendAt("2027-03-01", NOW)).toEqual({
      error: expect.stringContaining(
        "is more than 90 days ahead: rows may be scheduled up to 2027-02-21",
      ),
    });
  });

  it("is a column of a row, its error named by line and column", () => {
    const fields = { email: "a@example.com", product_code: "P", face_value: "10" };
    const ok = validateRow(
      { line: 2, fields: { ...fields, send_at: "2026-12-01T08:00Z" } },
      { now: NOW },
    );
    expect(ok).toMatchObject({ ok: true, row: { send_at: Date.parse("2026-12-01T08:00Z") } });
    const bad = validateRow({ line: 3, fields: { ...fields, send_at: "tomorrow" } }, { now: NOW });
    expect(bad).toMatchObject({ ok: false, errors: [{ line: 3, column: "send_at" }] });
    // An empty cell: sent at once.
    const none = validateRow({ line: 4, fields: { ...fields, send_at: " " } }, { now: NOW });
    expect(none).toMatchObject({ ok: true });
    expect((none as { row: object }).row).not.toHaveProperty("send_at");
  });
});

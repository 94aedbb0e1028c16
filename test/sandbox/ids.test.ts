import { describe, expect, it } from "vitest";
import { itemId, orderId } from "../../src/sandbox/ids.js";

describe("sandbox identifiers", () => {
  it("are ULID-like and distinct across refills of the random pool", () => {
    const ids = Array.from({ length: 5000 }, () => orderId(1_700_000_000_000).slice(2));
    for (const id of ids) expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // The time part is the same for the same instant; only the random part differs.
    expect(new Set(ids.map((id) => id.slice(0, 10))).size).toBe(1);
  });

  it("sort in the order they were made within one millisecond, and when the clock steps back", () => {
    const now = Date.now() + 60_000;
    const made = [
      ...Array.from({ length: 200 }, () => orderId(now)),
      orderId(now - 5),
      itemId(now).replace("E-", "O-"),
      orderId(now + 1),
    ];
    expect([...made].sort()).toEqual(made);
    expect(new Set(made).size).toBe(made.length);
  });

  it("prefix orders with O- and items with E-", () => {
    expect(orderId()).toMatch(/^O-[0-9A-Z]{26}$/);
    expect(itemId()).toMatch(/^E-[0-9A-Z]{26}$/);
  });
});

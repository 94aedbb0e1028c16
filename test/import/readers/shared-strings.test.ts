import { describe, expect, it } from "vitest";
import {
  SHARED_STRINGS_LIMITS,
  SharedStrings,
} from "../../../src/import/readers/shared-strings.js";

describe("SharedStrings", () => {
  it("gives back each string as added, UTF-8 and empty ones included, past a few growths", () => {
    const table = new SharedStrings();
    const added = ["", "a@example.com", "José Ñandú", "東京", "🎁 gift", ""];
    for (let i = 0; i < 20_000; i++) added.push(`user-${i}@example.com`);
    added.push("x".repeat(200_000));
    for (const text of added) expect(table.add(text)).toBe(true);
    expect(table.count).toBe(added.length);
    added.forEach((text, i) => {
      expect(table.get(i)).toBe(text);
    });
    expect(table.get(-1)).toBeUndefined();
    expect(table.get(added.length)).toBeUndefined();
    expect(table.get(1.5)).toBeUndefined();
  });

  it("refuses the string that would pass either limit, and keeps the ones before", () => {
    const byBytes = new SharedStrings({ bytes: 10, count: 100 });
    expect(byBytes.add("12345")).toBe(true);
    expect(byBytes.add("é1234")).toBe(false); // 6 bytes of UTF-8: 11 > 10
    expect(byBytes.bytes).toBe(5);
    expect(byBytes.count).toBe(1);
    const exact = new SharedStrings({ bytes: 10, count: 100 });
    expect(exact.add("12345")).toBe(true);
    expect(exact.add("é123")).toBe(true);
    expect(exact.add("")).toBe(true);
    expect(exact.add("x")).toBe(false);
    expect(exact.count).toBe(3);
    expect(exact.get(1)).toBe("é123");

    const byCount = new SharedStrings({ bytes: 1000, count: 2 });
    expect(byCount.add("a")).toBe(true);
    expect(byCount.add("")).toBe(true);
    expect(byCount.add("b")).toBe(false);
    expect(byCount.count).toBe(2);
  });

  it("states limits above a full sheet of e-mail addresses", () => {
    // A sheet holds 1,048,576 rows: two unique 30-character columns fit with room to spare.
    expect(SHARED_STRINGS_LIMITS.count).toBeGreaterThan(2 * 1_048_576);
    expect(SHARED_STRINGS_LIMITS.bytes).toBeGreaterThan(2 * 1_048_576 * 30);
  });
});

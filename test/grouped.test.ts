import { describe, expect, it } from "vitest";
import { grouped } from "../src/grouped.js";

describe("grouped", () => {
  it("writes a count as en-US's toLocaleString does", () => {
    const counts = [0, 7, 999, 1000, 20_000, 123_456, 1_000_000, -1234, 9_007_199_254_740_991];
    for (const n of counts) expect(grouped(n), String(n)).toBe(n.toLocaleString("en-US"));
    expect(grouped(1_000_000)).toBe("1,000,000");
  });

  it("leaves what is not a safe integer to toLocaleString", () => {
    expect(grouped(1234.5)).toBe("1,234.5");
    expect(grouped(Number.NaN)).toBe("NaN");
  });
});

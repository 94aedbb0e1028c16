import { describe, expect, it } from "vitest";
import { quoted } from "../../src/orders/quoted.js";

describe("quoted", () => {
  it("escapes quotes and invisible characters, cut or not", () => {
    expect(quoted('a"b\u202ec')).toBe('"a\\"b\\u{202e}c"');
    const cut = quoted(`${'"'.repeat(70)}`, 5);
    expect(cut).toBe('"\\"\\"\\"\\"\\"..." (70 characters)');
  });
});

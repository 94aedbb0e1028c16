import { describe, expect, it } from "vitest";
import { digestLine, parseDigestLine, recordDigest } from "../../src/catalog/record-digest.js";

describe("digests.txt lines", () => {
  it("round-trip any code, a newline or quote in it included, on one line", () => {
    const digest = recordDigest('{"code":"x"}');
    for (const code of ["AMZ-US-1", 'a "quoted"\ncode', "ünï cödé"]) {
      const line = digestLine(code, digest);
      expect(line).not.toContain("\n");
      expect(parseDigestLine(line)).toEqual({ code, digest });
    }
  });

  it("refuse lines that are not digest lines", () => {
    const digest = recordDigest("x");
    for (const line of [
      "",
      "garbage",
      `${digest}"no-space"`,
      `${digest} not-json`,
      `${digest} 42`,
      `${digest} "a"b"`,
      `${digest} "raw\u0001control"`,
      `${digest} "unterminated`,
    ]) {
      expect(parseDigestLine(line)).toBeUndefined();
    }
  });
});

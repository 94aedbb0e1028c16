import { describe, expect, it } from "vitest";
import { PreviousDigests } from "../../src/catalog/previous-digests.js";

function digestsOf(...codes: string[]): PreviousDigests {
  const digests = new PreviousDigests();
  for (const code of codes) digests.push(code, `digest of ${code}`);
  return digests;
}

describe("PreviousDigests", () => {
  it("finds codes that come in the previous order, and tells a repeated one", () => {
    const digests = digestsOf("a", "b", "c");
    expect(["a", "b", "b", "c"].map((code) => digests.see(code))).toEqual([
      "digest of a",
      "digest of b",
      undefined,
      "digest of c",
    ]);
    expect(digests.unseen()).toEqual([]);
  });

  it("finds codes in any other order, new ones and repeats included", () => {
    const digests = digestsOf("a", "b", "c", "d", "e");
    expect(["c", "a", "x", "a", "b", "x", "e"].map((code) => digests.see(code))).toEqual([
      "digest of c",
      "digest of a",
      null,
      undefined,
      "digest of b",
      null,
      "digest of e",
    ]);
    expect(digests.unseen()).toEqual(["d"]);
  });
});

// digests.txt is written with each code once; these are files damaged to repeat a line.
describe("PreviousDigests holding a code twice", () => {
  it("does not list a code removed that was seen under its other line", () => {
    const digests = digestsOf("a", "b", "a", "c");
    for (const code of ["a", "b", "c"]) digests.see(code);
    expect(digests.unseen()).toEqual([]);
  });

  it("lists a removed code once", () => {
    const digests = digestsOf("a", "b", "a", "c");
    for (const code of ["b", "c"]) digests.see(code);
    expect(digests.unseen()).toEqual(["a"]);
  });
});

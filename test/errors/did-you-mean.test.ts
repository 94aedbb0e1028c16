import { describe, expect, it } from "vitest";
import { closeNames, didYouMean } from "../../src/errors/did-you-mean.js";

describe("did you mean", () => {
  it("a name equal but for case comes first, whatever else is close", () => {
    expect(closeNames("Q4", ["q3", "q4", "q5"])).toEqual(["q4"]);
    expect(closeNames("SPRING-bonus", ["spring-bonus", "spring-bonuses"])).toEqual([
      "spring-bonus",
    ]);
  });

  it("a typo away: one edit for a short name, two from six characters, closest first", () => {
    expect(closeNames("q4", ["q3", "x9", "summer"])).toEqual(["q3"]);
    expect(closeNames("q44", ["q4", "abc"])).toEqual(["q4"]);
    expect(closeNames("ab", ["xy"])).toEqual([]);
    expect(closeNames("winter-gifts", ["wintr-gift", "winter-gift", "summer-gifts"])).toEqual([
      "winter-gift",
      "wintr-gift",
    ]);
    // Two neighbours swapped are one edit: a short name so swapped is still suggested, and a
    // swap comes before two edits.
    expect(closeNames("q43", ["q34"])).toEqual(["q34"]);
    expect(closeNames("stauts", ["status", "state"])).toEqual(["status", "state"]);
    expect(closeNames("campain", ["campaign"])).toEqual(["campaign"]);
  });

  it("never suggests the name itself, and at most three", () => {
    expect(closeNames("q4", ["q4"])).toEqual([]);
    expect(closeNames("aa", ["ab", "ac", "ad", "ae"])).toEqual(["ab", "ac", "ad"]);
  });

  it("words the suggestions", () => {
    expect(didYouMean([])).toBe("");
    expect(didYouMean(["q4"])).toBe('; did you mean "q4"?');
    expect(didYouMean(["a", "b", "c"])).toBe('; did you mean "a", "b" or "c"?');
  });
});

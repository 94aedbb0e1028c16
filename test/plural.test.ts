import { describe, expect, it } from "vitest";
import { plural } from "../src/plural.js";

describe("plural", () => {
  it("is the singular for one, the plural for any other count", () => {
    expect([0, 1, 2, 1000].map((n) => `${n} ${plural(n, "row")}`)).toEqual([
      "0 rows",
      "1 row",
      "2 rows",
      "1000 rows",
    ]);
    expect(plural(1, "row was", "rows were")).toBe("row was");
    expect(plural(3, "row was", "rows were")).toBe("rows were");
  });
});

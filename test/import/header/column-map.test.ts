import { describe, expect, it } from "vitest";
import { parseColumnMap } from "../../../src/import/header/column-map.js";

describe("parseColumnMap", () => {
  it("splits on the last '=' and trims", () => {
    expect(parseColumnMap(["Email Address=email", " a=b = product_code "])).toEqual({
      "Email Address": "email",
      "a=b": "product_code",
    });
  });

  it("refuses malformed and repeated mappings", () => {
    for (const bad of ["email", "=email", "Email="])
      expect(() => parseColumnMap([bad])).toThrow(/--map/);
    expect(() => parseColumnMap(["A=email", "A=face_value"])).toThrow(/mapped twice/);
  });
});

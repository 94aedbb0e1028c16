import { describe, expect, it } from "vitest";
import { productProblems } from "../../src/api/schemas.js";
import { catalogProductProblems, isCoreValid } from "../../src/catalog/product-check.js";
import { generateCatalog } from "../../src/sandbox/generate-catalog.js";
import { mulberry32 } from "../../src/sandbox/index.js";

type Json = unknown;
type Path = (string | number)[];

/** Every relied-on field and the parts of it the schema looks into. */
const PATHS: Path[] = [
  [],
  ["code"],
  ["name"],
  ["currency"],
  ["is_orderable"],
  ["state"],
  ["payout_type"],
  ["countries_redeemable_in"],
  ["countries_redeemable_in", 0],
  ["discount_multiplier"],
  ...["gift_card", "payment"].flatMap((type): Path[] => [
    [type],
    [type, "denominations"],
    [type, "denominations", "type"],
    [type, "denominations", "available_list"],
    [type, "denominations", "available_list", 0],
    [type, "denominations", "minimum_value"],
    [type, "denominations", "maximum_value"],
  ]),
  ["subscription"],
  ["subscription", "subscription_plans"],
  ["subscription", "subscription_plans", 0],
  ["subscription", "subscription_plans", 0, "subscription_plan_code"],
  ["subscription", "subscription_plans", 0, "price"],
  ["subscription", "subscription_plans", 0, "name"],
];

const DELETE = Symbol("delete");

/** Values of every JSON type, and strings on either side of each pattern. */
const VALUES: (Json | typeof DELETE)[] = [
  DELETE,
  null,
  "",
  "x",
  "USD",
  "usd",
  "US",
  "USDX",
  "1.00",
  "10",
  "1.",
  ".5",
  "-1.00",
  " 1.00",
  "1.00\n",
  "1e3",
  "١٢",
  0,
  1.5,
  true,
  false,
  [],
  ["GB"],
  ["1.00", "2.50"],
  ["1.00", 2],
  [null],
  [{}],
  {},
  { denominations: {} },
  { denominations: { type: "open", minimum_value: "1.00", maximum_value: "5.00" } },
  { denominations: [] },
  { subscription_plans: [] },
  { subscription_plans: [{ subscription_plan_code: "P", price: "1.00" }] },
  { subscription_plans: [{ subscription_plan_code: "", price: "1.00" }] },
  { subscription_plans: {} },
  { subscription_plan_code: "P-1", price: "9.99", name: null },
];

function mutate(product: Json, path: Path, value: Json | typeof DELETE): Json {
  if (path.length === 0) return value === DELETE ? undefined : value;
  const copy = structuredClone(product) as Record<string | number, unknown>;
  let parent = copy;
  for (const key of path.slice(0, -1)) {
    const next = parent[key];
    if (next === null || typeof next !== "object") return copy; // nothing to reach into
    parent = next as Record<string | number, unknown>;
  }
  const last = path[path.length - 1] as string | number;
  if (value === DELETE) delete parent[last];
  else parent[last] = structuredClone(value);
  return copy;
}

function expectSameVerdict(product: Json): void {
  const want = productProblems(product);
  expect(isCoreValid(product)).toBe(want.length === 0);
  expect(catalogProductProblems(product)).toEqual(want);
}

const catalog = generateCatalog({ products: 400, seed: 3 });
const bases = ["gift_card", "payment", "subscription"].flatMap((type) =>
  catalog.filter((p) => p.payout_type === type).slice(0, 3),
);

describe("catalogProductProblems", () => {
  it("has gift cards (open and fixed), payment products and subscriptions to start from", () => {
    expect(new Set(bases.map((p) => p.payout_type))).toEqual(
      new Set(["gift_card", "payment", "subscription"]),
    );
    for (const product of catalog) expect(catalogProductProblems(product)).toEqual([]);
  });

  it("agrees with productProblems on every single-field change of every relied-on field", () => {
    let invalid = 0;
    for (const base of bases) {
      for (const path of PATHS) {
        for (const value of VALUES) {
          const product = mutate(base, path, value);
          expectSameVerdict(product);
          if (productProblems(product).length > 0) invalid += 1;
        }
      }
    }
    expect(invalid).toBeGreaterThan(500); // the changes do reach the schema's checks
  });

  it("agrees with productProblems on random combinations of changes", () => {
    const random = mulberry32(20240611);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
    for (let i = 0; i < 3000; i++) {
      let product: Json = pick(bases);
      const changes = 1 + Math.floor(random() * 4);
      for (let c = 0; c < changes; c++) {
        product = mutate(product, pick(PATHS.slice(1)), pick(VALUES));
      }
      expectSameVerdict(product);
    }
  });

  it("returns a new array each time (the sync appends to it)", () => {
    const product = bases[0];
    const first = catalogProductProblems(product);
    first.push("code: appears more than once; the last one is indexed");
    expect(catalogProductProblems(product)).toEqual([]);
  });
});

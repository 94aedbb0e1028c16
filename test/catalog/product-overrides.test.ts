// The product states pushed by product.update, in Redis: the timestamp rule of the recording
// script, and how they are laid over a snapshot's index.
import { describe, expect, it } from "vitest";
import {
  applyProductOverrides,
  type ProductOverride,
  ProductOverrides,
} from "../../src/catalog/product-overrides.js";
import { catalogIndexOf, indexEntry } from "../helpers/catalog-index.js";
import {
  expectNewestKept,
  expectNewestOfRace,
  productUpdate,
  PUSHED_AT as T,
} from "../helpers/product-updates.js";
import { useRedisPrefix } from "../helpers/redis-prefix.js";

const redis = useRedisPrefix("overrides");

describe("ProductOverrides (Redis)", () => {
  it("keeps the newest state of each product: an older or as old one is stale", async () => {
    const store = new ProductOverrides(redis.redis, redis.prefix);
    expect(store.key).toBe(`${redis.prefix}:product-overrides`);
    await expectNewestKept(store);
    // A hash by product code, each value the newest state and its timestamp as JSON.
    const raw = await redis.redis.hget(store.key, "A");
    expect(JSON.parse(raw!)).toMatchObject({ at: T + 1, state: { is_orderable: true } });
  });

  it("keeps the denominations a message carries, and only the state's known fields", async () => {
    const store = new ProductOverrides(redis.redis, redis.prefix);
    const message = productUpdate("A", T, true);
    const denominations = { type: "fixed", available_list: ["10.00", "25.00"] };
    message.new_state = { ...message.new_state, denominations, colour: "red" } as never;
    await store.record(message);
    expect((await store.read()).A?.state).toEqual({
      price_multiplier: "0.05",
      is_orderable: true,
      denominations,
    });
  });

  it("messages recorded at once, in any order, leave the newest", async () => {
    const other = redis.redis.duplicate();
    try {
      await expectNewestOfRace(
        new ProductOverrides(redis.redis, redis.prefix),
        new ProductOverrides(other, redis.prefix),
      );
    } finally {
      await other.quit();
    }
  });

  it("replaces a damaged value, and leaves unreadable ones out when reading", async () => {
    const store = new ProductOverrides(redis.redis, redis.prefix);
    await redis.redis.hset(store.key, "A", "not json", "B", JSON.stringify({ at: "soon" }));
    expect(await store.read()).toEqual({});
    expect(await store.record(productUpdate("A", T, false))).toBe("applied");
    expect(Object.keys(await store.read())).toEqual(["A"]);
  });
});

function override(at: number, state: ProductOverride["state"]): ProductOverride {
  return { at, timestamp: new Date(at).toISOString(), state, received_at: "" };
}

describe("applyProductOverrides", () => {
  const fetchedAt = Date.parse("2026-01-01T00:00:00Z");
  const later = fetchedAt + 60_000;

  it("lays a newer state over the snapshot's entries without changing them", () => {
    const index = catalogIndexOf(
      indexEntry("GC"),
      indexEntry("PLAN-1", {
        plan_of: "SUB",
        payout_type: "subscription",
        denominations: { type: "fixed", list: ["9.99"] },
      }),
      indexEntry("BAD", { denominations: null, problems: ["currency: missing"] }),
      indexEntry("SAME"),
    );
    const before = structuredClone(index);
    const denominations = { type: "open", minimum_value: "20.00", maximum_value: "50.00" };
    const out = applyProductOverrides(index, {
      GC: override(later, { price_multiplier: "0.10", is_orderable: false, denominations }),
      SUB: override(later, { price_multiplier: "0.20", is_orderable: false, denominations }),
      BAD: override(later, { price_multiplier: "0.05", is_orderable: true, denominations }),
    });
    expect(index).toEqual(before);
    expect(out.entries.GC).toMatchObject({
      is_orderable: false,
      discount_multiplier: "0.10",
      denominations: { type: "open", min: "20.00", max: "50.00" },
      pushed_at: new Date(later).toISOString(),
      state: "LIVE",
    });
    // A plan takes its product's orderable and multiplier; its denomination stays its price.
    expect(out.entries["PLAN-1"]).toMatchObject({
      is_orderable: false,
      discount_multiplier: "0.20",
      denominations: { type: "fixed", list: ["9.99"] },
    });
    expect(out.entries.BAD?.denominations).toBeNull();
    expect(out.entries.SAME).toBe(index.entries.SAME);
  });

  it("ignores what the snapshot is newer than; unreadable denominations refuse", () => {
    const index = catalogIndexOf(indexEntry("GC"), indexEntry("ODD"));
    const none = applyProductOverrides(index, {
      GC: override(fetchedAt, { price_multiplier: "0.10", is_orderable: false }),
    });
    expect(none).toBe(index);
    const odd = applyProductOverrides(index, {
      ODD: override(later, {
        price_multiplier: "0.10",
        is_orderable: true,
        denominations: { type: "tiered" },
      }),
    });
    expect(odd.entries.ODD?.denominations).toBeNull();
  });
});

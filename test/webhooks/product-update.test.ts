// product.update as the OpenAPI defines it ({product_code, old_state, new_state, timestamp},
// each state {price_multiplier, is_orderable, denominations?}), sent by the sandbox through a
// real receiver, recorded in Redis and read by the next import.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadCurrentIndex } from "../../src/catalog/current-snapshot.js";
import { type ProductOverride, ProductOverrides } from "../../src/catalog/product-overrides.js";
import { syncCatalog } from "../../src/catalog/sync-catalog.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import type { ImportOptions } from "../../src/import/import-flags.js";
import type { ImportResult } from "../../src/import/import-types.js";
import { Ledger } from "../../src/ledger/ledger.js";
import type { Product } from "../../src/sandbox/types.js";
import { fileStores } from "../../src/stores/file-stores.js";
import { depsOf } from "../helpers/campaign-env.js";
import { testRedis } from "../helpers/redis.js";
import { openCard } from "../helpers/sandbox.js";
import { tmpDir } from "../helpers/tmp-dir.js";
import { eventually } from "../helpers/wait-for.js";
import {
  messagesCounted,
  postSigned,
  type WebhookEnv,
  webhookEnv,
} from "../helpers/webhook-env.js";

let w: WebhookEnv | undefined;
afterEach(async () => {
  await w?.dispose();
  w = undefined;
});

/** POST /_sandbox/products/{code}: the sandbox changes the product and sends product.update. */
async function changeProduct(env: WebhookEnv, code: string, change: Record<string, unknown>) {
  const res = await fetch(`${env.env.sandbox.url}/_sandbox/products/${code}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(change),
  });
  expect(res.status).toBe(200);
}

/** The override Redis holds for `code` once `ready` says it is the one awaited. */
async function pushed(
  env: WebhookEnv,
  code: string,
  ready: (override: ProductOverride) => boolean,
): Promise<ProductOverride> {
  const overrides = new ProductOverrides(env.env.redis, env.env.config.prefix);
  let found: ProductOverride | undefined;
  await eventually(async () => {
    found = (await overrides.read())[code];
    return found !== undefined && ready(found);
  }, `the product.update of ${code} recorded`);
  return found!;
}

/** A dry-run import of one row of `code` at `face` in the env's data dir (or `deps` given). */
async function importOne(
  env: WebhookEnv,
  code: string,
  face: string,
  extra: Partial<ImportOptions> = {},
  deps = depsOf(env.env),
): Promise<ImportResult> {
  const file = join(env.env.dataDir, `${code}-${face}.csv`);
  await writeFile(file, `email,product_code,face_value\na@example.com,${code},${face}\n`);
  return importCampaign(
    { file, campaign: "p", dryRun: true, confirm: async () => true, ...extra },
    deps,
  );
}

/** Why an import of one row was refused: its row's error, or the refusal's message. */
async function refusal(run: Promise<ImportResult>): Promise<string> {
  const error = (await run.then(
    () => undefined,
    (e: unknown) => e,
  )) as { message: string; result?: ImportResult } | undefined;
  expect(error, "the import to be refused").toBeDefined();
  return [error!.message, ...(error!.result?.errors ?? []).map((e) => e.message)].join("\n");
}

/** A product.update body as the OpenAPI defines it. */
function update(product: Product, orderable: boolean, at: Date) {
  const state = (is_orderable: boolean) => ({
    price_multiplier: product.discount_multiplier,
    is_orderable,
  });
  return {
    product_code: product.code,
    old_state: state(!orderable),
    new_state: state(orderable),
    timestamp: at.toISOString(),
  };
}

describe("product.update", () => {
  it("is_orderable false: imports refuse it, true lifts it, an older one is stale", async () => {
    w = await webhookEnv("wh-pu-orderable");
    const product = openCard(w.env.sandbox);
    const face = product.gift_card!.denominations.minimum_value;
    expect((await importOne(w, product.code, face)).valid).toBe(1);

    await changeProduct(w, product.code, { is_orderable: false });
    const off = await pushed(w, product.code, (o) => !o.state.is_orderable);
    expect(await refusal(importOne(w, product.code, face))).toContain(
      `product ${product.code} is not orderable (product.update of ${off.timestamp})`,
    );
    // Older than the one recorded (messages may come out of order): ignored, counted stale.
    const late = update(product, true, new Date(Date.parse(off.timestamp) - 60_000));
    expect(await postSigned(w.receiver.url, w.secret, late)).toEqual({
      status: 200,
      result: "stale",
    });
    expect(await messagesCounted(w.registry, "product.update", "stale")).toBe(1);
    expect(await refusal(importOne(w, product.code, face))).toContain("is not orderable");

    await changeProduct(w, product.code, { is_orderable: true });
    await pushed(w, product.code, (o) => o.state.is_orderable);
    expect((await importOne(w, product.code, face)).valid).toBe(1);
    expect(await messagesCounted(w.registry, "product.update", "applied")).toBe(2);
  });

  it("price_multiplier: the import prices with it, its budget check too", async () => {
    w = await webhookEnv("wh-pu-price");
    const product = openCard(w.env.sandbox);
    const multiplier = product.discount_multiplier === "0.1000" ? "0.2000" : "0.1000";
    const price = multiplier === "0.1000" ? "90.00" : "80.00";
    await changeProduct(w, product.code, { price_multiplier: multiplier });
    await pushed(w, product.code, (o) => o.state.price_multiplier === multiplier);
    const priced = await importOne(w, product.code, "100.00");
    expect(priced.totals.USD).toMatchObject({ face_value: "100.00", price });
    const cents = Math.round(Number(price) * 100) - 1;
    const under = { budget: [`${(cents / 100).toFixed(2)}:USD`] };
    expect(await refusal(importOne(w, product.code, "100.00", under))).toMatch(/budget/i);
    const enough = { budget: [`${price}:USD`] };
    expect((await importOne(w, product.code, "100.00", enough)).valid).toBe(1);
  });

  it("denominations: the import refuses the face values they no longer take", async () => {
    w = await webhookEnv("wh-pu-denominations");
    const product = openCard(w.env.sandbox);
    await changeProduct(w, product.code, {
      denominations: { minimum_value: "20.00", maximum_value: "50.00" },
    });
    const narrowed = await pushed(
      w,
      product.code,
      (o) => o.state.denominations?.minimum_value === "20.00",
    );
    expect(await refusal(importOne(w, product.code, "60.00"))).toContain(
      `face_value 60.00 is outside ${product.code}'s range 20.00..50.00 USD ` +
        `(product.update of ${narrowed.timestamp})`,
    );
    expect((await importOne(w, product.code, "25.00")).valid).toBe(1);
    await changeProduct(w, product.code, {
      denominations: { type: "fixed", available_list: ["25.00", "40.00"] },
    });
    await pushed(w, product.code, (o) => o.state.denominations?.type === "fixed");
    expect(await refusal(importOne(w, product.code, "30.00"))).toContain("is not one of");
    expect((await importOne(w, product.code, "40.00")).valid).toBe(1);
  });

  it("a body of another shape (states as strings, ...) is 400, records nothing", async () => {
    w = await webhookEnv("wh-pu-shape");
    const product = openCard(w.env.sandbox);
    const timestamp = new Date().toISOString();
    const strings = {
      product_code: product.code,
      old_state: "LIVE",
      new_state: "TEMPORARILY_DISABLED",
      timestamp,
    };
    expect(await postSigned(w.receiver.url, w.secret, strings)).toEqual({
      status: 400,
      result: "bad_request",
    });
    const half = { ...update(product, false, new Date()), new_state: { price_multiplier: "0.05" } };
    expect((await postSigned(w.receiver.url, w.secret, half)).status).toBe(400);
    const badTime = { ...update(product, false, new Date()), timestamp: "yesterday" };
    expect((await postSigned(w.receiver.url, w.secret, badTime)).status).toBe(400);
    expect(await messagesCounted(w.registry, "product.update", "bad_request")).toBe(3);
    const overrides = new ProductOverrides(w.env.redis, w.env.config.prefix);
    expect(await overrides.read()).toEqual({});
    expect(
      (await importOne(w, product.code, product.gift_card!.denominations.minimum_value)).valid,
    ).toBe(1);
  });

  it("what a receiver records is seen by an import with another data dir", async () => {
    w = await webhookEnv("wh-pu-shared");
    const product = openCard(w.env.sandbox);
    const face = product.gift_card!.denominations.minimum_value;
    // Another machine: its own data dir, its snapshot synced before the message.
    const otherDir = await tmpDir("wh-pu-other");
    await syncCatalog({ client: w.env.client, dataDir: otherDir });
    const otherIndex = (await loadCurrentIndex(otherDir))!;
    expect(otherIndex.entries[product.code]!.is_orderable).toBe(true);

    await changeProduct(w, product.code, { is_orderable: false });
    await pushed(w, product.code, (o) => !o.state.is_orderable);
    const redis = testRedis();
    try {
      // Its own connection too: only the Redis and the prefix are shared.
      const ledger = new Ledger(redis, w.env.config.prefix);
      const deps = { ...depsOf(w.env), ledger, catalog: otherIndex, stores: fileStores(otherDir) };
      expect(await refusal(importOne(w, product.code, face, {}, deps))).toContain(
        "is not orderable",
      );
      const overrides = new ProductOverrides(redis, w.env.config.prefix);
      const seen = await loadCurrentIndex(otherDir, overrides);
      expect(seen!.entries[product.code]!.is_orderable).toBe(false);
    } finally {
      await redis.quit();
    }
  });
});

// One meaning of "orderable" (src/catalog/orderable.ts; docs/concepts.md, "Orderable"):
// `catalog show --orderable`, the import's preflight and the worker's product guard agree on every
// product of a real snapshot, with product.update states laid over it; catalog show says which
// products a product.update changed.
import { describe, expect, it } from "vitest";
import { ApiClient } from "../../src/api/client.js";
import type { OrderRequest } from "../../src/api/order-request.js";
import type { ProductUpdate } from "../../src/api/schemas.js";
import { loadCurrentIndex } from "../../src/catalog/current-snapshot.js";
import { fileCatalogStore } from "../../src/catalog/file-store.js";
import { isOrderable, notOrderableReason } from "../../src/catalog/orderable.js";
import { syncCatalog } from "../../src/catalog/sync-catalog.js";
import { checkProduct } from "../../src/import/validation/preflight.js";
import type { Product } from "../../src/sandbox/types.js";
import { ProductGuard } from "../../src/webhooks/product-guard.js";
import { type CampaignEnv, giftjobs } from "../helpers/campaign-env.js";
import { csvFile } from "../helpers/csv.js";
import { freePort } from "../helpers/free-port.js";
import { control, findProduct } from "../helpers/sandbox.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";

const envs = useCampaignEnv();

const openUsd = (p: Product) => p.currency === "USD" && p.gift_card?.denominations.type === "open";

function request(code: string, face: number): OrderRequest {
  return {
    payment_method: { type: "ACCOUNT_BALANCE", currency: "USD" },
    items: [
      {
        face_value: face,
        distribution_method: { type: "EMAIL", email_address: "a@example.com" },
        products: { type: "SINGLE", value: code },
      },
    ],
  };
}

function update(code: string, state: ProductUpdate["new_state"]): ProductUpdate {
  return {
    product_code: code,
    old_state: { price_multiplier: "0.05", is_orderable: true },
    new_state: state,
    timestamp: new Date(Date.now() + 1000).toISOString(),
  };
}

/** Five open USD cards: LIVE, DEGRADED, DISABLED yet is_orderable, and two a product.update changes. */
async function catalogOfFive(env: CampaignEnv) {
  const picked: Product[] = [];
  for (let i = 0; i < 5; i++)
    picked.push(
      findProduct(
        env.sandbox,
        (p) => openUsd(p) && p.is_orderable && p.state === "LIVE" && !picked.includes(p),
      ),
    );
  const [live, degraded, disabled, stopped, repriced] = picked.map((p) => p.code) as [
    string,
    string,
    string,
    string,
    string,
  ];
  await control(env.sandbox, "/_sandbox/catalog", {
    mutate: {
      update: [
        { code: degraded, state: "TEMPORARILY_DEGRADED" },
        { code: disabled, state: "TEMPORARILY_DISABLED" },
      ],
    },
  });
  const client = new ApiClient({ baseUrl: env.sandbox.url, apiKey: env.config.apiKey });
  await syncCatalog({ client, dataDir: env.dataDir, allowShrink: true });
  const overrides = env.ledger.productOverrides();
  // Only is_orderable changes: the product's own multiplier.
  const multiplier = String(picked[3]!.discount_multiplier);
  await overrides.record(update(stopped, { price_multiplier: multiplier, is_orderable: false }));
  await overrides.record(update(repriced, { price_multiplier: "0.0123", is_orderable: true }));
  return { live, degraded, disabled, stopped, repriced, overrides };
}

describe("orderable: one predicate", () => {
  it("takes LIVE and TEMPORARILY_DEGRADED products the service calls orderable, nothing else", () => {
    const p = (is_orderable: unknown, state?: unknown) => ({ code: "P", is_orderable, state });
    expect(isOrderable(p(true, "LIVE"))).toBe(true);
    expect(isOrderable(p(true, "TEMPORARILY_DEGRADED"))).toBe(true);
    expect(notOrderableReason(p(true, "TEMPORARILY_DISABLED"))).toBe(
      "product P is TEMPORARILY_DISABLED, not LIVE or TEMPORARILY_DEGRADED",
    );
    expect(notOrderableReason(p(false, "LIVE"))).toBe("product P is not orderable");
    expect(isOrderable(p(true, "SOMETHING_NEW"))).toBe(false);
    expect(isOrderable(p("yes", "LIVE"))).toBe(false);
    // A pushed state without a snapshot: is_orderable alone decides.
    expect(isOrderable(p(true))).toBe(true);
  });

  it("catalog show --orderable, the import and the product guard agree on every product", async () => {
    const env = await envs.setup("orderable-views");
    const five = await catalogOfFive(env);
    const shown = await giftjobs(env, ["catalog", "show", "--orderable", "--json"]);
    expect(shown.code, shown.stderr).toBe(0);
    const showCodes = new Set(
      (JSON.parse(shown.stdout) as { code: string }[]).map((product) => product.code),
    );
    expect(showCodes.has(five.live)).toBe(true);
    expect(showCodes.has(five.degraded)).toBe(true);
    expect(showCodes.has(five.repriced)).toBe(true);
    expect(showCodes.has(five.disabled)).toBe(false);
    expect(showCodes.has(five.stopped)).toBe(false);

    // The import's index (snapshot + product.update) and the guard over the same data dir.
    const index = await five.overrides.applyTo((await loadCurrentIndex(env.dataDir))!);
    const guard = new ProductGuard(
      { overrides: five.overrides, catalog: fileCatalogStore(env.dataDir) },
      -1,
    );
    for (const product of env.sandbox.state.catalog.products) {
      if (product.payout_type === "subscription") continue;
      const entry = index.entries[product.code]!;
      const preflight = checkProduct(entry);
      const importable = preflight === undefined || /no denominations/.test(preflight);
      const guarded = await guard.stopReason(request(product.code, 10));
      const what = `${product.code} (${product.state}, ${preflight ?? "ok"}, ${guarded ?? "ok"})`;
      expect(showCodes.has(product.code), what).toBe(importable);
      expect(guarded === undefined, what).toBe(importable);
    }
    expect(await guard.stopReason(request(five.disabled, 10))).toMatch(
      new RegExp(
        `^product_unavailable: product ${five.disabled} is TEMPORARILY_DISABLED, not LIVE or ` +
          "TEMPORARILY_DEGRADED \\(catalog snapshot fetched ",
      ),
    );

    // The import over the CLI: the DEGRADED product's row is valid, the others refused.
    const csv = [
      "email,product_code,face_value",
      `a@example.com,${five.degraded},10`,
      `b@example.com,${five.disabled},10`,
      `c@example.com,${five.stopped},10`,
    ].join("\n");
    const file = await csvFile(env, "orderable.csv", `${csv}\n`);
    const run = await giftjobs(env, [
      "orders",
      "import",
      file,
      "--campaign",
      "views",
      "--dry-run",
      "--json",
    ]);
    const result = JSON.parse(run.stdout) as {
      valid: number;
      errors: { line: number; message: string }[];
    };
    expect(result.valid).toBe(1);
    expect(result.errors.map((e) => [e.line, e.message])).toEqual([
      [3, `product ${five.disabled} is TEMPORARILY_DISABLED, not LIVE or TEMPORARILY_DEGRADED`],
      [4, expect.stringMatching(`^product ${five.stopped} is not orderable \\(product.update of `)],
    ]);
  });

  it("catalog show lays the product.update states over the snapshot and says which", async () => {
    const env = await envs.setup("orderable-show");
    const five = await catalogOfFive(env);
    const table = await giftjobs(env, ["catalog", "show"]);
    expect(table.code, table.stderr).toBe(0);
    const rowOf = (code: string) => table.stdout.split("\n").find((l) => l.startsWith(code))!;
    // ORDERABLE is the predicate's answer: the pushed is_orderable, the snapshot's state.
    expect(rowOf(five.stopped)).toMatch(/ no {8}LIVE /);
    expect(rowOf(five.disabled)).toMatch(/ no {8}TEMPORARILY_DISABLED /);
    expect(rowOf(five.degraded)).toMatch(/ yes {7}TEMPORARILY_DEGRADED /);
    const line = table.stderr.split("\n").find((l) => l.includes("product.update"));
    expect(line).toMatch(
      new RegExp(
        "^2 products changed by product.update since the sync: " +
          `(${five.stopped} \\(is_orderable false; of [^)]+\\)|${five.repriced} \\(discount_multiplier 0.0123; of [^)]+\\))`,
      ),
    );
    expect(line).toContain(five.repriced);

    const json = await giftjobs(env, ["catalog", "show", "--code", five.stopped, "--json"]);
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({
        code: five.stopped,
        is_orderable: false,
        state: "LIVE",
        product_update: { timestamp: expect.any(String), changed: ["is_orderable"] },
      }),
    ]);
    // A product no product.update changed carries no product_update.
    const plain = await giftjobs(env, ["catalog", "show", "--code", five.live, "--json"]);
    expect(JSON.parse(plain.stdout)[0]).not.toHaveProperty("product_update");

    // Redis away: the snapshot as synced, after one line saying so.
    const port = await freePort();
    const away = await giftjobs(env, ["catalog", "show", "--code", five.stopped], {
      GIFTJOBS_REDIS_URL: `redis://127.0.0.1:${port}`,
    });
    expect(away.code).toBe(0);
    expect(away.stderr.split("\n")[0]).toBe(
      `giftjobs: warning: Redis at 127.0.0.1:${port} does not answer: is it running? ` +
        "(GIFTJOBS_REDIS_URL); product.update changes since the sync are not shown",
    );
    expect(away.stdout.split("\n")[1]).toMatch(/ yes {7}LIVE /);
  });
});

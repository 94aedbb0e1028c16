import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { campaignStatus } from "../../src/campaigns/status.js";
import type { CatalogIndexEntry } from "../../src/catalog/index-entry.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { pickSampleProducts, sampleCsv } from "../../src/import/sample-csv.js";
import { currencyDecimals, fromUnits, toUnits } from "../../src/money.js";
import { type CampaignEnv, depsOf, FAST_TIMINGS, giftjobs } from "../helpers/campaign-env.js";
import { item, orderBody, postOrder } from "../helpers/sandbox.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { eventually } from "../helpers/wait-for.js";

const CAMPAIGN = "lookalike";
const ONE_ATTEMPT = { attempts: 1, backoff: { type: "fixed", delay: 10 } };
/** The row of file line 6 (the fifth recipient): the sandbox refuses it, failed_final. */
const REFUSED = "recipient-000005@example.com";

/**
 * `orders reconcile` against the sandbox over HTTP: orders of the account made outside giftjobs
 * (POST /v2/order by hand, no giftjobs metadata) that pay a recipient of the campaign the card
 * and face value of a row are possible duplicates (`lookalikes`, exit 1); the window's other
 * orders are counted (`other_orders`).
 * See docs/commands.md, "Reconcile".
 */
describe("orders reconcile: look-alikes and other orders", () => {
  const envs = useCampaignEnv();

  /** `rows` rows of one product (one face value), all sent; the campaign's product. */
  async function campaignOf(env: CampaignEnv, rows: number): Promise<CatalogIndexEntry> {
    const path = join(env.dataDir, "rows.csv");
    await writeFile(path, sampleCsv(env.index, { rows, products: 1, referencePrefix: "r" }));
    await importCampaign(
      { file: path, campaign: CAMPAIGN, executionMode: "sync", jobOptions: ONE_ATTEMPT },
      depsOf(env),
    );
    await envs.work(env, { concurrency: 2, timings: FAST_TIMINGS });
    await eventually(async () => {
      const s = await campaignStatus(env.ledger, CAMPAIGN);
      return s.completed + s.failed_final === rows;
    }, "campaign settled");
    await envs.stopWorkers();
    return pickSampleProducts(env.index, 1)[0]!;
  }

  /** A product of the snapshot other than `not`, orderable, in `currency` (or not in it). */
  function otherProduct(env: CampaignEnv, not: CatalogIndexEntry, sameCurrency: boolean) {
    const found = Object.values(env.index.entries).find(
      (e) =>
        e.code !== not.code &&
        e.is_orderable &&
        e.state === "LIVE" &&
        e.payout_type === "gift_card" &&
        e.denominations?.type === "open" &&
        (e.currency === not.currency) === sameCurrency,
    );
    if (!found) throw new Error("the sandbox's catalog has no such product");
    return found;
  }

  const face = (entry: CatalogIndexEntry) =>
    Number(entry.denominations?.type === "open" ? entry.denominations.min : "0");

  /** An order made by hand on the account (no giftjobs metadata unless given). */
  async function byHand(
    env: CampaignEnv,
    entry: CatalogIndexEntry,
    email: string,
    extra: Record<string, unknown> = {},
    mode = "sync",
  ) {
    const body = orderBody(entry.currency, [item(entry.code, face(entry), email)], extra);
    const answer = await postOrder(env.sandbox, body, { mode });
    expect(answer.status, answer.text).toBeLessThan(300);
    return answer.json as { id: string; total_price: string; created_at: string };
  }

  /** a + b in `currency`, exactly. */
  function sum(currency: string, a: string, b: string): string {
    const scale = currencyDecimals(currency);
    return fromUnits(toUnits(a, scale) + toUnits(b, scale), scale);
  }

  it("an order by hand to a row's recipient: a possible duplicate, exit 1; the others counted", async () => {
    const env = await envs.setup("recon-alike", { refuseEmails: [REFUSED] });
    const product = await campaignOf(env, 25);
    expect(await campaignStatus(env.ledger, CAMPAIGN)).toMatchObject({
      completed: 24,
      failed_final: 1,
    });
    env.sandbox.setFaults({ refuseEmails: [] });
    // The refused row paid by hand, outside giftjobs: the same card, face value and e-mail.
    const byHandRefused = await byHand(env, product, REFUSED);
    // The same card to someone else, made by another giftjobs campaign (its tags name it).
    const spring = await byHand(env, product, "someone.else@example.org", {
      metadata: { giftjobs_campaign: "spring", giftjobs_key: "spring-key-1" },
    });
    // Other orders: another card of the currency (twice), a card of another currency, and
    // the campaign's card in an order that ended FAILED (nothing paid).
    const sameCurrency = otherProduct(env, product, true);
    const other1 = await byHand(env, sameCurrency, "a@example.net");
    const other2 = await byHand(env, sameCurrency, "b@example.net");
    const foreignProduct = otherProduct(env, product, false);
    const foreign = await byHand(env, foreignProduct, "c@example.net");
    env.sandbox.setFaults({ asyncFailRate: 1, asyncCompleteMs: 0 });
    await byHand(env, product, "recipient-000001@example.com", {}, "async");

    const run = await giftjobs(env, ["orders", "reconcile", "--campaign", CAMPAIGN, "--json"]);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).not.toContain(REFUSED);
    expect(run.stdout).not.toContain("someone.else@example.org");
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({
      agree: false,
      service_orders: 24 + 6,
      unknown_to_ledger: [],
      missing_on_service: [],
      status_disagreements: [],
      uncertain: [],
      unidentified: [],
    });
    const faceValue = `${product.denominations?.type === "open" ? product.denominations.min : ""}`;
    // Only the order to a recipient of the campaign is a look-alike, with the row it pays again.
    expect(report.lookalikes).toEqual([
      {
        order_id: byHandRefused.id,
        status: "COMPLETED",
        created_at: byHandRefused.created_at,
        currency: product.currency,
        total_price: byHandRefused.total_price,
        items: [
          {
            product: product.code,
            face_value: expect.any(String),
            distribution: "EMAIL",
            email: "r***@example.com",
            rows_count: 1,
            rows: [{ line: 6, status: "failed_final" }],
          },
        ],
      },
    ]);
    expect(Number(report.lookalikes[0].items[0].face_value)).toBe(Number(faceValue));
    // Another campaign's order to someone else: that campaign's, no suspect.
    expect(report.suspects).toEqual([]);
    expect(report.classes).toEqual({
      campaign: 24,
      other_campaigns: { spring: 1 },
      repeats: 0,
      suspects: 0,
      lookalikes: 1,
      others: 4,
      unidentified: 0,
    });
    expect(report.other_orders).toEqual({
      count: 4,
      failed: 1,
      totals: {
        [product.currency]: sum(product.currency, other1.total_price, other2.total_price),
        [foreignProduct.currency]: foreign.total_price,
      },
    });

    const text = await giftjobs(env, ["orders", "reconcile", "--campaign", CAMPAIGN]);
    expect(text.code, text.stderr).toBe(1);
    expect(text.stdout).toContain(
      "POSSIBLE DUPLICATES (untagged orders paying a recipient of the campaign the same card; check them before any retry): 1",
    );
    expect(text.stdout).toContain(`${byHandRefused.id} COMPLETED`);
    expect(text.stdout).toContain("r***@example.com pays again 1 row: failed_final: line 6\n");
    expect(text.stdout).not.toContain(spring.id);
    expect(text.stdout).toContain("other campaigns' 1 (spring 1)");
    const totals = Object.entries(report.other_orders.totals).map(
      ([cur, total]) => `${cur} ${total}`,
    );
    expect(text.stdout).toContain(
      `other orders of the account in the window: 4 (${totals.join(", ")}, 1 FAILED)\n`,
    );
    expect(text.stdout).toContain("DISAGREEMENT: see above");
    expect(text.stdout).not.toContain(REFUSED);
  });

  it("other orders alone: counted with their totals, no disagreement, exit 0", async () => {
    const env = await envs.setup("recon-others");
    const product = await campaignOf(env, 2);
    const other = await byHand(env, otherProduct(env, product, true), "a@example.net");
    // The campaign's card at another face value is not alike either.
    const body = orderBody(product.currency, [
      item(product.code, face(product) + 1, "recipient-000001@example.com"),
    ]);
    const another = await postOrder(env.sandbox, body, { mode: "sync" });
    expect(another.status, another.text).toBe(200);
    // An order still PROCESSING shows no items: listed as unidentified, not counted.
    env.sandbox.setFaults({ asyncCompleteMs: 600_000 });
    const processing = await byHand(env, product, "recipient-000001@example.com", {}, "async");

    const run = await giftjobs(env, ["orders", "reconcile", "--campaign", CAMPAIGN, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({
      agree: true,
      service_orders: 5,
      unidentified: [processing.id],
      lookalikes: [],
      classes: { campaign: 2, others: 2, unidentified: 1, lookalikes: 0, suspects: 0 },
      other_orders: {
        count: 2,
        failed: 0,
        totals: {
          [product.currency]: sum(product.currency, other.total_price, another.json.total_price),
        },
      },
    });
  });
});

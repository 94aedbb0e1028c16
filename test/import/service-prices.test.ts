import { describe, expect, it } from "vitest";
import { ApiClient } from "../../src/api/client.js";
import { campaignStatus } from "../../src/campaigns/status.js";
import { moneyOf } from "../../src/campaigns/summary.js";
import type { CatalogIndexEntry } from "../../src/catalog/index-entry.js";
import { RunError } from "../../src/errors/run-error.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { ImportRefused } from "../../src/import/import-errors.js";
import { currencyDecimals, discountedPriceUnits, fromUnits, toUnits } from "../../src/money.js";
import { type CampaignEnv, depsOf, giftjobs } from "../helpers/campaign-env.js";
import { csvFile } from "../helpers/csv.js";
import { freePort } from "../helpers/free-port.js";
import { sandboxOrders, stats } from "../helpers/sandbox.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { eventually } from "../helpers/wait-for.js";

const { setup, work } = useCampaignEnv({ asyncCompleteMs: 50 });

/** The multiplier the service prices with after the snapshot was synced: not the snapshot's. */
const SERVICE_MULTIPLIER = "0.0250";
const CURRENCIES = ["EUR", "JPY", "USD"];

interface Line {
  code: string;
  face: string;
  rows: number;
}

/** An open and a fixed LIVE gift card of each currency, from the snapshot, and a face of each. */
function pickLines(e: CampaignEnv): Line[] {
  const lines: Line[] = [];
  const entries = Object.values(e.index.entries).filter(
    (p) => p.is_orderable && p.state === "LIVE" && p.payout_type === "gift_card",
  );
  for (const currency of CURRENCIES) {
    for (const type of ["open", "fixed"] as const) {
      const entry = entries.find((p) => p.currency === currency && p.denominations?.type === type);
      if (!entry) throw new Error(`no ${type} ${currency} card in the snapshot`);
      lines.push({ code: entry.code, face: faceOf(entry), rows: 2 + lines.length });
    }
  }
  return lines;
}

function faceOf(entry: CatalogIndexEntry): string {
  const d = entry.denominations!;
  return d.type === "open" ? d.min : d.list[0]!;
}

function csvOf(lines: Line[]): string {
  const rows = ["email,product_code,face_value"];
  let n = 0;
  for (const line of lines)
    for (let i = 0; i < line.rows; i++) rows.push(`p${n++}@example.com,${line.code},${line.face}`);
  return `${rows.join("\n")}\n`;
}

/** Price per currency of `lines` with each product's multiplier as `multiplierOf` gives it. */
function expectedTotals(
  e: CampaignEnv,
  lines: Line[],
  multiplierOf: (code: string) => string,
): Record<string, string> {
  const units = new Map<string, bigint>();
  for (const line of lines) {
    const currency = e.index.entries[line.code]!.currency;
    const one = discountedPriceUnits(line.face, multiplierOf(line.code), currency);
    units.set(currency, (units.get(currency) ?? 0n) + one * BigInt(line.rows));
  }
  return Object.fromEntries(
    [...units].map(([c, u]) => [c, fromUnits(u, currencyDecimals(c))]).sort(),
  );
}

const pricesOf = (totals: Record<string, { price: string }>) =>
  Object.fromEntries(Object.entries(totals).map(([c, t]) => [c, t.price]));

/** The service discounts the lines' products by SERVICE_MULTIPLIER now, unknown to the snapshot. */
function repriceAtService(e: CampaignEnv, lines: Line[]): void {
  const update = lines.map((l) => ({ code: l.code, discount_multiplier: SERVICE_MULTIPLIER }));
  e.sandbox.state.mutateCatalog({ update });
}

/** POST /v2/order/estimate requests the sandbox answered, whatever their status. */
async function estimateCalls(e: CampaignEnv): Promise<number> {
  const byStatus = (await stats(e.sandbox)).requests["POST /v2/order/estimate"] ?? {};
  return Object.values(byStatus).reduce((a, b) => a + b, 0);
}

describe("an import's prices are the service's", () => {
  it("a dry run shows the service's totals and says so; an order of them costs that", async () => {
    const e = await setup("prices-service");
    const lines = pickLines(e);
    const file = await csvFile(e, "three.csv", csvOf(lines));
    repriceAtService(e, lines);
    const service = expectedTotals(e, lines, () => SERVICE_MULTIPLIER);
    const snapshot = expectedTotals(e, lines, (code) => e.index.entries[code]!.discount_multiplier);
    expect(service).not.toEqual(snapshot);

    const dry = await giftjobs(e, ["orders", "import", file, "--campaign", "p", "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("  prices: the service's own (its estimate)\n");
    for (const [currency, price] of Object.entries(service))
      expect(dry.stdout).toMatch(
        new RegExp(`\n  ${currency}: face value [\\d.]+, price ${price} \\(`),
      );
    const json = await giftjobs(e, [
      "orders",
      "import",
      file,
      "--campaign",
      "p",
      "--dry-run",
      "--json",
    ]);
    const doc = JSON.parse(json.stdout);
    expect(doc.priced_by).toBe("service");
    expect(doc.pricing_note).toBeUndefined();
    expect(pricesOf(doc.totals)).toEqual(service);
    // One estimate per currency: two cards each, whatever the rows.
    expect(await estimateCalls(e)).toBe(2 * CURRENCIES.length);

    const balances = await Promise.all(
      CURRENCIES.map(async (c) => toUnits(e.sandbox.state.book.balance(c).balance, 2)),
    );
    const result = await importCampaign({ file, campaign: "p" }, depsOf(e));
    const rows = lines.reduce((sum, l) => sum + l.rows, 0);
    expect(result).toMatchObject({ enqueued: rows, priced_by: "service" });
    expect(pricesOf(result.totals)).toEqual(service);
    // Recorded at the service's prices: the budget's running total is what will be charged.
    const planned = moneyOf(await e.ledger.campaigns.meta("p"));
    expect(Object.fromEntries(CURRENCIES.map((c) => [c, planned[c]!.price]))).toEqual(service);
    await work(e);
    await eventually(async () => (await campaignStatus(e.ledger, "p")).completed === rows, "done");

    const charged = new Map<string, bigint>();
    for (const order of (await sandboxOrders(e.sandbox)) as unknown as {
      currency: string;
      total_price: string;
    }[]) {
      const scale = currencyDecimals(order.currency);
      charged.set(
        order.currency,
        (charged.get(order.currency) ?? 0n) + toUnits(order.total_price, scale),
      );
    }
    const spent = moneyOf(await e.ledger.campaigns.meta("p"));
    for (const [i, currency] of CURRENCIES.entries()) {
      const scale = currencyDecimals(currency);
      expect(fromUnits(charged.get(currency)!, scale)).toBe(service[currency]);
      expect(spent[currency]!.spent).toBe(service[currency]);
      const after = toUnits(e.sandbox.state.book.balance(currency).balance, 2);
      expect(balances[i]! - after).toBe(toUnits(service[currency]!, 2));
    }
  });

  it("with the estimate failing, a dry run shows the snapshot's prices and says why", async () => {
    const e = await setup("prices-fallback");
    const lines = pickLines(e);
    const file = await csvFile(e, "three.csv", csvOf(lines));
    repriceAtService(e, lines);
    const snapshot = expectedTotals(e, lines, (code) => e.index.entries[code]!.discount_multiplier);
    e.sandbox.setFaults({ estimateFailRate: 1 });

    const json = await giftjobs(e, [
      "orders",
      "import",
      file,
      "--campaign",
      "f",
      "--dry-run",
      "--json",
    ]);
    expect(json.code).toBe(0);
    const doc = JSON.parse(json.stdout);
    expect(doc.priced_by).toBe("snapshot");
    expect(doc.pricing_note).toMatch(
      /^the service did not answer: 500 internal_server_error: Injected failure/,
    );
    expect(pricesOf(doc.totals)).toEqual(snapshot);
    const text = await giftjobs(e, ["orders", "import", file, "--campaign", "f", "--dry-run"]);
    expect(text.code).toBe(0);
    const local = "prices: estimated locally from the catalog snapshot";
    const why = "the service did not answer: 500 internal_server_error: Injected failure";
    expect(text.stdout).toContain(`\n  ${local} (${why} (estimate fail rate))\n`);
    expect(text.stderr).toBe("");

    // Recorded at the snapshot's prices then: the only ones there are.
    const result = await importCampaign({ file, campaign: "f" }, depsOf(e));
    expect(result).toMatchObject({ priced_by: "snapshot", enqueued: 27 });
    const planned = moneyOf(await e.ledger.campaigns.meta("f"));
    expect(Object.fromEntries(CURRENCIES.map((c) => [c, planned[c]!.price]))).toEqual(snapshot);
  });

  it("a refused key stops a dry run; no service, no catalog: priced locally, saying why", async () => {
    const e = await setup("prices-refused");
    const lines = pickLines(e);
    const file = await csvFile(e, "three.csv", csvOf(lines));
    e.sandbox.setApiKey("another-key");
    const refused = await importCampaign({ file, campaign: "k", dryRun: true }, depsOf(e)).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(RunError);
    expect((refused as RunError).message).toBe(
      "the API key is not valid (invalid_api_key, HTTP 401): check GIFTJOBS_API_KEY. Nothing was enqueued.",
    );
    e.sandbox.setApiKey(undefined);

    const nowhere = new ApiClient({ baseUrl: `http://127.0.0.1:${await freePort()}`, apiKey: "k" });
    const away = await importCampaign(
      { file, campaign: "k", dryRun: true },
      { ...depsOf(e), client: nowhere },
    );
    expect(away.priced_by).toBe("snapshot");
    expect(away.pricing_note).toMatch(/^the service did not answer: cannot reach the service at /);
    expect(pricesOf(away.totals)).toEqual(
      expectedTotals(e, lines, (code) => e.index.entries[code]!.discount_multiplier),
    );

    // Without the catalog check every row pays in --currency: the service refuses the other
    // currencies' products, and the rows are shown at face value, the discount unknown.
    const unchecked = await importCampaign(
      { file, campaign: "k", dryRun: true, currency: "USD" },
      { ...depsOf(e), catalog: undefined },
    );
    expect(unchecked.priced_by).toBe("face_value");
    expect(unchecked.pricing_note).toMatch(
      /^the service refused to price the rows: 422 validation_error: /,
    );
    expect(unchecked.totals.USD!.price).toBe(unchecked.totals.USD!.face_value);
    const usd = lines.filter((l) => e.index.entries[l.code]!.currency === "USD");
    const usdFile = await csvFile(e, "usd.csv", csvOf(usd));
    const priced = await importCampaign(
      { file: usdFile, campaign: "k", dryRun: true, currency: "USD" },
      { ...depsOf(e), catalog: undefined },
    );
    expect(priced.priced_by).toBe("service");
    expect(pricesOf(priced.totals)).toEqual(
      expectedTotals(e, usd, (code) => e.index.entries[code]!.discount_multiplier),
    );
  });

  it("a budget and the balance are checked at the service's prices", async () => {
    const e = await setup("prices-budget");
    const lines = pickLines(e).filter((l) => e.index.entries[l.code]!.currency === "USD");
    const file = await csvFile(e, "usd.csv", csvOf(lines));
    // The service discounts less than the snapshot says: it costs more than the snapshot's price.
    const update = lines.map((l) => ({ code: l.code, discount_multiplier: "0.0000" }));
    e.sandbox.state.mutateCatalog({ update });
    const snapshot = expectedTotals(e, lines, (code) => e.index.entries[code]!.discount_multiplier);
    const service = expectedTotals(e, lines, () => "0");
    expect(toUnits(snapshot.USD!, 2)).toBeLessThan(toUnits(service.USD!, 2));

    const budget = [`${snapshot.USD!}:USD`];
    const over = await importCampaign({ file, campaign: "b", budget }, depsOf(e)).catch(
      (error: unknown) => error,
    );
    expect(over).toBeInstanceOf(ImportRefused);
    expect((over as ImportRefused).message).toBe(
      `--budget ${snapshot.USD}:USD: the campaign costs ${service.USD} USD; nothing was enqueued`,
    );
    expect((over as ImportRefused).result.priced_by).toBe("service");

    e.sandbox.state.book.setBalance("USD", snapshot.USD!);
    const poor = await importCampaign({ file, campaign: "b" }, depsOf(e)).catch(
      (error: unknown) => error,
    );
    expect((poor as ImportRefused).message).toMatch(
      new RegExp(`^the new rows cost ${service.USD} USD but the balance is ${snapshot.USD} USD`),
    );
    expect(await e.ledger.campaigns.exists("b")).toBe(false);
  });

  it("1,200 rows of one card make one estimate; 600 cards of one currency two", async () => {
    const e = await setup("prices-calls");
    const entry = Object.values(e.index.entries).find(
      (p) =>
        p.is_orderable &&
        p.state === "LIVE" &&
        p.currency === "USD" &&
        p.denominations?.type === "open" &&
        toUnits(p.denominations.max, 2) - toUnits(p.denominations.min, 2) >= 600n,
    )!;
    const rows = ["email,product_code,face_value"];
    for (let i = 0; i < 1200; i++) rows.push(`same${i}@example.com,${entry.code},${faceOf(entry)}`);
    const same = await csvFile(e, "same.csv", `${rows.join("\n")}\n`);
    const result = await importCampaign({ file: same, campaign: "s", dryRun: true }, depsOf(e));
    expect(result).toMatchObject({ valid: 1200, priced_by: "service" });
    expect(await estimateCalls(e)).toBe(1);
    const one = discountedPriceUnits(faceOf(entry), entry.discount_multiplier, "USD");
    expect(result.totals.USD!.price).toBe(fromUnits(one * 1200n, 2));

    // 600 face values a cent apart: 600 cards, more than one estimate takes.
    const min = toUnits(faceOf(entry), 2);
    const many = ["email,product_code,face_value"];
    for (let i = 0; i < 600; i++)
      many.push(`many${i}@example.com,${entry.code},${fromUnits(min + BigInt(i), 2)}`);
    const spread = await csvFile(e, "spread.csv", `${many.join("\n")}\n`);
    e.sandbox.reset();
    const priced = await importCampaign({ file: spread, campaign: "m", dryRun: true }, depsOf(e));
    expect(priced.priced_by).toBe("service");
    expect((await stats(e.sandbox)).requests["POST /v2/order/estimate"]).toEqual({ "200": 2 });
  });
});

import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { campaignStatus } from "../../../src/campaigns/status.js";
import type { Config } from "../../../src/config.js";
import { importCampaign } from "../../../src/import/import-campaign.js";
import { sampleCsv } from "../../../src/import/sample-csv.js";
import { fromUnits } from "../../../src/money.js";
import { type CampaignEnv, depsOf, FAST_TIMINGS, giftjobs } from "../../helpers/campaign-env.js";
import { control } from "../../helpers/sandbox.js";
import { useCampaignEnv } from "../../helpers/use-campaign-env.js";
import { eventually } from "../../helpers/wait-for.js";

/**
 * A systemic refusal pauses the campaign with a reason that says what to do and how to resume
 * (real workers, the sandbox over HTTP).
 */
describe("pause reasons", () => {
  const envs = useCampaignEnv();

  async function importRows(env: CampaignEnv, rows: number) {
    const file = join(env.dataDir, "orders.csv");
    await writeFile(file, sampleCsv(env.index, { rows, products: 2, currency: "USD" }));
    await importCampaign(
      { file, campaign: "q4", itemsPerOrder: 1, balanceCheck: false },
      depsOf(env),
    );
  }

  async function work(env: CampaignEnv, config: Partial<Config> = {}) {
    await envs.work(env, {
      config: { ...env.config, ...config },
      concurrency: 1,
      timings: FAST_TIMINGS,
    });
  }

  async function pausedReason(env: CampaignEnv): Promise<string> {
    await eventually(
      async () => (await campaignStatus(env.ledger, "q4")).paused !== null,
      "campaign paused",
    );
    return (await env.ledger.campaigns.pausedReason("q4"))!;
  }

  it("insufficient funds: the currency, the account's key, how much is short, and resume", async () => {
    const env = await envs.setup("pause-funds");
    await importRows(env, 3);
    const prices: bigint[] = [];
    for await (const [, order] of env.ledger.orders.all("q4")) prices.push(BigInt(order.price!));
    const total = prices.reduce((a, b) => a + b, 0n);
    // Less than the cheapest order: every order is refused.
    const balance = [...prices].sort((a, b) => (a < b ? -1 : 1))[0]! - 1n;
    await control(env.sandbox, "/_sandbox/balances", { USD: fromUnits(balance, 2) });
    await work(env);
    const reason = await pausedReason(env);
    const usd = (units: bigint) => `${fromUnits(units, 2)} USD`;
    expect(reason).toMatch(
      /^insufficient_funds: The USD balance is too low for this order \([\d.]+ needed\)\. /,
    );
    expect(reason.replace(/^.*?needed\)\. /, "")).toBe(
      `Top up the USD balance of the account whose key is GIFTJOBS_API_KEY by at least ${usd(total - balance)}: its balance is ${usd(balance)} and the 3 orders still to send cost ${usd(total)}; then: giftjobs orders resume --campaign q4`,
    );
    expect(reason).not.toContain(env.config.apiKey!);

    // As an operator reads it.
    const status = await giftjobs(env, ["orders", "status", "--campaign", "q4"]);
    expect(status.stdout).toContain(`PAUSED since `);
    expect(status.stdout).toContain(`: ${reason}\n`);
  }, 120_000);

  it("a refused API key names GIFTJOBS_API_KEY, never the key", async () => {
    const env = await envs.setup("pause-auth");
    await importRows(env, 2);
    // The key is rotated on the service: the workers' key is answered 401 invalid_api_key.
    await control(env.sandbox, "/_sandbox/api-key", { api_key: "a-new-key-0000" });
    await work(env);
    const reason = await pausedReason(env);
    // The service's message (as the client words it), then what to do.
    expect(reason).toMatch(/^invalid_api_key: [^;]*GIFTJOBS_API_KEY/);
    expect(reason).toMatch(
      /\. The service refused the API key: set GIFTJOBS_API_KEY to a valid key allowed to order and restart the workers; then: giftjobs orders resume --campaign q4$/,
    );
    expect(reason).not.toContain(env.config.apiKey!);
    expect(reason).not.toContain("a-new-key-0000");
  });

  it("a removed API version (410): upgrade or set GIFTJOBS_API_VERSION", async () => {
    const env = await envs.setup("pause-version");
    await importRows(env, 2);
    await work(env, { apiVersion: "2023-07-27" });
    expect(await pausedReason(env)).toBe(
      "version_removed: API version 2023-07-27 has been removed. Upgrade giftjobs, or set GIFTJOBS_API_VERSION to a version the service supports (unset: the account's own), and restart the workers; then: giftjobs orders resume --campaign q4",
    );
  });
});

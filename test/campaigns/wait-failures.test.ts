import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { pauseCampaign } from "../../src/campaigns/control.js";
import { campaignStatus, pendingRows } from "../../src/campaigns/status.js";
import { failureLine } from "../../src/campaigns/wait-for-campaign.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { sampleCsv } from "../../src/import/sample-csv.js";
import { type CampaignEnv, depsOf, giftjobs } from "../helpers/campaign-env.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { eventually } from "../helpers/wait-for.js";

const QUICK_JOBS = { attempts: 2, backoff: { type: "fixed", delay: 50 } };

/** `orders status --wait` exiting 1 says why, in one line (text and --json), with real workers. */
describe("why a wait fails", () => {
  const envs = useCampaignEnv();

  async function importRows(env: CampaignEnv, campaign: string, rows: number) {
    const file = join(env.dataDir, `${campaign}.csv`);
    await writeFile(file, sampleCsv(env.index, { rows, products: 2 }));
    await importCampaign({ file, campaign, itemsPerOrder: 1, jobOptions: QUICK_JOBS }, depsOf(env));
  }

  const settled = (env: CampaignEnv, campaign: string) =>
    eventually(
      async () => pendingRows(await campaignStatus(env.ledger, campaign)) === 0,
      `campaign ${campaign} at its end`,
      60_000,
    );

  it("failed_final rows: their count by error type and the commands to see and resend them", async () => {
    const env = await envs.setup("wait-final", {
      refuseEmails: ["recipient-000001@example.com", "recipient-000003@example.com"],
    });
    await importRows(env, "q4", 5);
    await envs.work(env);
    await settled(env, "q4");
    const line =
      "campaign q4: 2 rows failed_final (validation error: 2); each row's error: giftjobs orders report --campaign q4; to send them again: giftjobs orders retry --campaign q4 --new-key (once fixed: nothing was made for them)";

    const text = await giftjobs(env, ["orders", "status", "--campaign", "q4", "--wait"]);
    expect(text.code).toBe(1);
    expect(text.stderr).toBe(`giftjobs: ${line}\n`);
    expect(text.stdout).toContain("completed 3, failed_final 2");

    const json = await giftjobs(env, ["orders", "status", "--campaign", "q4", "--wait", "--json"]);
    expect(json.code).toBe(1);
    expect(json.stderr).toBe(`giftjobs: ${line}\n`);
    expect(JSON.parse(json.stdout)).toMatchObject({
      campaign: "q4",
      completed: 3,
      failed_final: 2,
      exit_reason: line,
      failures: { failed_final: { validation_error: 2 }, failed_uncertain: {} },
    });

    // Without --wait, or when nothing failed, no such line and no such field.
    const plain = await giftjobs(env, ["orders", "status", "--campaign", "q4", "--json"]);
    expect([plain.code, plain.stderr]).toEqual([0, ""]);
    expect(JSON.parse(plain.stdout)).not.toHaveProperty("exit_reason");
  }, 180_000);

  it("failed_uncertain rows: retried under their same keys", async () => {
    const env = await envs.setup("wait-uncertain", { failRate: 1 });
    await importRows(env, "u", 2);
    await envs.work(env);
    await settled(env, "u");
    const run = await giftjobs(env, ["orders", "status", "--campaign", "u", "--wait"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      "giftjobs: campaign u: 2 rows failed_uncertain (internal server error: 2); each row's error: giftjobs orders report --campaign u; to send them again: giftjobs orders retry --campaign u (same keys: an order may exist)\n",
    );
  }, 180_000);

  it("a wait that times out on a paused campaign says it is paused, and why", async () => {
    const env = await envs.setup("wait-paused");
    await importRows(env, "held-up", 2);
    await pauseCampaign(env.ledger, "held-up", "paused by operator");
    const run = await giftjobs(env, [
      "orders",
      "status",
      "--campaign",
      "held-up",
      "--wait",
      "--timeout",
      "1",
    ]);
    expect(run.code).toBe(124);
    // The pause is told at once (a wait without --timeout would otherwise say nothing), then
    // the timeout with it.
    const since = (await campaignStatus(env.ledger, "held-up")).paused!.since;
    expect(run.stderr).toBe(
      `giftjobs: campaign held-up is PAUSED since ${since}: paused by operator\n` +
        "giftjobs: timed out after 1 s waiting for campaign held-up: 0 of 2 rows done; it is PAUSED: paused by operator\n",
    );
  }, 180_000);

  it("a campaign with nothing failed exits 0 without the line", async () => {
    const env = await envs.setup("wait-ok");
    await importRows(env, "fine", 2);
    await envs.work(env);
    const run = await giftjobs(env, ["orders", "status", "--campaign", "fine", "--wait"]);
    expect([run.code, run.stderr]).toEqual([0, ""]);
    expect(run.stdout).toContain("completed 2, failed_final 0");
  }, 180_000);
});

describe("the line of a failed wait", () => {
  it("names the three most frequent error types, then how many more, and both retries", () => {
    const line = failureLine("c", {
      failed_final: { validation_error: 4, product_unavailable: 1, a: 2, b: 3, c: 1 },
      failed_uncertain: { request_timeout: 1 },
    });
    expect(line).toBe(
      "campaign c: 11 rows failed_final (validation error: 4, b: 3, a: 2, and 2 more) and 1 row failed_uncertain (request timeout: 1); each row's error: giftjobs orders report --campaign c; to send them again: giftjobs orders retry --campaign c (failed_uncertain, same keys), giftjobs orders retry --campaign c --new-key (failed_final, once fixed)",
    );
  });
});

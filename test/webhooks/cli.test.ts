import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { campaignStatus } from "../../src/campaigns/status.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { type CampaignEnv, campaignEnv, cliEnvOf, depsOf } from "../helpers/campaign-env.js";
import { type CliChild, exited, runCli, spawnCli } from "../helpers/cli.js";
import { writeLargeCsv } from "../helpers/csv.js";
import { freePort } from "../helpers/free-port.js";
import { eventually, waitFor } from "../helpers/wait-for.js";
import { postSigned } from "../helpers/webhook-env.js";
import { newWebhookSecret } from "../helpers/webhook-inbox.js";

/** The command under test (stopped after each test) and its campaign env. */
let env: CampaignEnv | undefined;
let child: CliChild | undefined;
afterEach(async () => {
  if (child && child.exitCode === null) {
    child.kill("SIGTERM");
    await exited(child);
  }
  child = undefined;
  await env?.dispose();
  env = undefined;
});

describe("giftjobs webhooks", () => {
  it("refuses to start without GIFTJOBS_WEBHOOK_SECRET, in one line naming it", async () => {
    const run = await runCli(["webhooks", "--port", "0"], { GIFTJOBS_WEBHOOK_SECRET: "" });
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toBe(
      "giftjobs: error: GIFTJOBS_WEBHOOK_SECRET: is not set: give the webhook signing secret the service shows (whsec_...)",
    );
    const bad = await runCli(["webhooks", "--port", "0"], {
      GIFTJOBS_WEBHOOK_SECRET: "whsec_!!not-base64!!",
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^giftjobs: error: GIFTJOBS_WEBHOOK_SECRET: must be whsec_/);
    expect(bad.stderr).not.toContain("not-base64");
  });

  it("receives signed messages on --port and stops on SIGTERM", async () => {
    env = await campaignEnv({}, "wh-cli");
    const secret = newWebhookSecret();
    child = spawnCli(["webhooks", "--port", "0"], {
      ...cliEnvOf(env),
      GIFTJOBS_WEBHOOK_SECRET: secret,
      GIFTJOBS_LOG_LEVEL: "warn",
    });
    const c = child;
    const url = await waitFor(
      async () => /listening on (\S+)/.exec(c.printed().stdout)?.[1],
      20_000,
      "the receiver's URL",
    );
    const code = Object.keys(env.index.entries)[0]!;
    const body = {
      product_code: code,
      old_state: { price_multiplier: "0.05", is_orderable: true },
      new_state: { price_multiplier: "0.05", is_orderable: false },
      timestamp: new Date().toISOString(),
    };
    expect(await postSigned(url, secret, body)).toEqual({ status: 200, result: "applied" });
    expect((await postSigned(url, newWebhookSecret(), body)).status).toBe(401);
    c.kill("SIGTERM");
    expect(await exited(c)).toBe(0);
  });
});

describe("giftjobs worker --webhook-port", () => {
  it("receives the webhooks in the worker: a campaign ends with no GET /v2/order", async () => {
    env = await campaignEnv({ asyncCompleteMs: 50, orderRateLimit: 100_000 }, "wh-worker");
    const e = env;
    const secret = newWebhookSecret();
    const port = await freePort();
    await e.sandbox.setWebhooks({
      webhookUrl: `http://127.0.0.1:${port}/webhooks`,
      webhookSecret: secret,
      webhookRetryBaseMs: 100,
    });
    const file = join(e.dataDir, "w.csv");
    await writeLargeCsv(e.index, file, 30);
    await importCampaign(
      { file, campaign: "w", executionMode: "async", confirm: async () => true },
      depsOf(e),
    );
    child = spawnCli(
      [
        "worker",
        "--queues",
        "orders",
        "--webhook-port",
        String(port),
        "--webhook-poll-delay",
        "60000",
      ],
      { ...cliEnvOf(e), GIFTJOBS_WEBHOOK_SECRET: secret, GIFTJOBS_LOG_LEVEL: "warn" },
    );
    await eventually(
      async () => (await campaignStatus(e.ledger, "w")).completed === 30,
      "30 rows completed",
      30_000,
    );
    const stats = (await (await fetch(`${e.sandbox.url}/_sandbox/stats`)).json()) as {
      order_lookups: number;
    };
    expect(stats.order_lookups).toBe(0);
    child.kill("SIGTERM");
    expect(await exited(child)).toBe(0);
  });
});

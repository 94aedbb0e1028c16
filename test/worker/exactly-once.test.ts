import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { campaignStatus } from "../../src/campaigns/status.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { sampleCsv } from "../../src/import/sample-csv.js";
import { type CampaignEnv, campaignEnv, cliEnvOf, depsOf } from "../helpers/campaign-env.js";
import { exited, runCli, spawnCli } from "../helpers/cli.js";
import { eventually } from "../helpers/wait-for.js";

const ROWS = 300;

describe("exactly once under faults, crashes and re-runs", () => {
  let env: CampaignEnv;
  const children: ReturnType<typeof spawnCli>[] = [];
  afterEach(async (context) => {
    if (context.task.result?.state === "fail") {
      for (const child of children)
        console.error(`--- worker ${child.pid}\n${child.output().slice(-3000)}`);
      console.error(JSON.stringify(await campaignStatus(env.ledger, "once")));
    }
    for (const child of children) child.kill("SIGKILL");
    await Promise.all(children.map(exited));
    await env?.dispose();
  });

  it("pays each of 300 rows once with two workers, one SIGKILLed twice", async () => {
    env = await campaignEnv(
      { failRate: 0.1, dropRate: 0.05, orderRateLimit: 3000, asyncCompleteMs: 200, products: 200 },
      "once",
    );
    const file = join(env.dataDir, "orders.csv");
    await writeFile(file, sampleCsv(env.index, { rows: ROWS }));
    const deps = depsOf(env);
    const jobOptions = { attempts: 30, backoff: { type: "exponential", delay: 100, jitter: 0.5 } };
    expect((await importCampaign({ file, campaign: "once", jobOptions }, deps)).enqueued).toBe(
      ROWS,
    );

    const cliEnv = {
      ...cliEnvOf(env),
      // Slightly above the sandbox's 3000/min: the service's limit binds and 429s happen.
      GIFTJOBS_ORDER_RATE_LIMIT: "3750",
      GIFTJOBS_LOG_LEVEL: "warn",
    };
    const worker = () => {
      const child = spawnCli(
        ["worker", "--queues", "orders", "--concurrency", "8", "--lock-duration", "2000"],
        cliEnv,
      );
      children.push(child);
      return child;
    };
    const steady = worker();
    let victim = worker();
    const done = async () => {
      const s = await campaignStatus(env.ledger, "once");
      return s.completed + s.failed_final + s.failed_uncertain;
    };
    for (const share of [0.25, 0.55]) {
      await eventually(
        async () => (await done()) >= ROWS * share,
        `${share * 100}% of rows done`,
        30_000,
      );
      victim.kill("SIGKILL");
      await exited(victim);
      victim = worker();
    }
    await eventually(async () => (await done()) === ROWS, "every row done", 120_000);

    const again = await importCampaign({ file, campaign: "once", jobOptions }, deps);
    expect(again).toMatchObject({ enqueued: 0, already_known: ROWS });

    const status = await runCli(["orders", "status", "--campaign", "once", "--json"], cliEnv);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      campaign: "once",
      total: ROWS,
      completed: ROWS,
      queued: 0,
      in_flight: 0,
      submitted: 0,
      failed_final: 0,
      failed_uncertain: 0,
    });

    const { orders } = (await (await fetch(`${env.sandbox.url}/_sandbox/orders`)).json()) as {
      orders: {
        idempotency_key: string;
        items: { distribution_method: { email_address: string } }[];
      }[];
    };
    const emails = orders.flatMap((o) => o.items.map((i) => i.distribution_method.email_address));
    expect(emails).toHaveLength(ROWS);
    expect(new Set(emails).size).toBe(ROWS);
    expect(new Set(orders.map((o) => o.idempotency_key)).size).toBe(orders.length);
    expect(steady.exitCode).toBeNull();
  }, 240_000);
});

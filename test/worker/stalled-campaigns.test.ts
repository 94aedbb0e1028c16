import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { campaignStatus } from "../../src/campaigns/status.js";
import { WorkerBeats } from "../../src/campaigns/worker-beats.js";
import { type RunningDashboard, startDashboard } from "../../src/dashboard/start-dashboard.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { sampleCsv } from "../../src/import/sample-csv.js";
import { createLogger } from "../../src/log.js";
import { type RunningMetrics, startMetrics } from "../../src/metrics/start-metrics.js";
import { type CampaignEnv, depsOf, FAST_TIMINGS, giftjobs } from "../helpers/campaign-env.js";
import { freePort } from "../helpers/free-port.js";
import { tcpProxy } from "../helpers/tcp-proxy.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { eventually } from "../helpers/wait-for.js";

/** The worker's log lines, parsed. */
function capture() {
  const lines: { level: number; msg: string; text: string }[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      const text = String(chunk);
      const { level, msg } = JSON.parse(text) as { level: number; msg: string };
      lines.push({ level, msg, text });
      cb();
    },
  });
  return { lines, log: createLogger({ destination, pretty: false, level: "debug" }) };
}

/** `orders status --json` and `orders list --json` of `campaign`, through the CLI. */
async function cliViews(env: CampaignEnv, campaign: string) {
  const status = await giftjobs(env, ["orders", "status", "--campaign", campaign, "--json"]);
  expect(status.code, status.stderr).toBe(0);
  const list = await giftjobs(env, ["orders", "list", "--json"]);
  expect(list.code, list.stderr).toBe(0);
  const listed = (JSON.parse(list.stdout) as Record<string, unknown>[]).find(
    (c) => c.campaign === campaign,
  )!;
  return { status: JSON.parse(status.stdout) as Record<string, unknown>, listed };
}

async function text(url: string): Promise<string> {
  return (await fetch(url)).text();
}

describe("stalled campaigns", () => {
  const envs = useCampaignEnv();
  let dashboard: RunningDashboard | undefined;
  let metrics: RunningMetrics | undefined;
  afterEach(async () => {
    await dashboard?.close();
    await metrics?.close();
    dashboard = undefined;
    metrics = undefined;
  });

  it("a worker that cannot reach the service says so once, and its campaign shows stalled everywhere until the service answers", async () => {
    const e = await envs.setup("stall-svc", { asyncCompleteMs: 50 });
    const file = join(e.dataDir, "orders.csv");
    await writeFile(file, sampleCsv(e.index, { rows: 4 }));
    // Retried often and for long: the rows wait for the service, none ends failed_uncertain.
    const jobOptions = { attempts: 10_000, backoff: { type: "fixed", delay: 300 } };
    await importCampaign({ file, campaign: "s", jobOptions }, depsOf(e));
    const port = await freePort(); // nothing listens there yet
    const url = `http://127.0.0.1:${port}`;
    const { lines, log } = capture();
    await envs.work(e, {
      config: { ...e.config, apiUrl: url },
      log,
      concurrency: 2,
      // One line only while the test lasts: the next would come after 10 minutes.
      timings: {
        ...FAST_TIMINGS,
        trackerTickMs: 100,
        serviceQuietMs: 1000,
        serviceLineMs: 600_000,
      },
    });

    await eventually(
      async () => (await campaignStatus(e.ledger, "s")).stalled?.reason === "service_unreachable",
      "the campaign marked stalled",
    );
    const { status, listed } = await cliViews(e, "s");
    for (const view of [status, listed]) {
      expect(view.state).toBe("running");
      expect(view.stalled).toMatchObject({
        reason: "service_unreachable",
        since: expect.any(String),
      });
      const message = (view.stalled as { message: string }).message;
      expect(message).toContain(`the workers cannot reach the service (${url}: `);
      expect(message).toContain("connection refused");
      expect(message).toContain("GIFTJOBS_API_URL");
      expect(message).not.toContain("test-key-123456");
      // Added last, after the fields scripts already read.
      expect(Object.keys(view).at(-1)).toBe("stalled");
    }
    dashboard = await startDashboard({ config: e.config, port: 0 });
    expect(await text(`${dashboard.url}campaigns/s`)).toContain(
      "the workers cannot reach the service",
    );
    const campaigns = await text(dashboard.url);
    expect(campaigns).toContain("campaign <strong>s</strong> is stalled: the workers cannot reach");
    expect(campaigns).toMatch(
      /<tr data-campaign="s" class="stalled" data-stalled-reason="service_unreachable"/,
    );
    metrics = await startMetrics({ config: e.config, port: 0 });
    expect(await text(metrics.url)).toContain(
      'giftjobs_campaign_stalled{campaign="s",reason="service_unreachable"} 1',
    );
    // One line for the outage, however many requests failed; nothing else at warn or above.
    const down = lines.filter((l) => l.msg.startsWith(`cannot reach the service at ${url}`));
    expect(down).toHaveLength(1);
    expect(down[0]!.msg).toMatch(/\(connection_refused: connection refused by 127\.0\.0\.1:\d+\)/);
    expect(lines.filter((l) => l.level >= 40)).toEqual(down);
    // Refused connections sent nothing: put back under the same key, no attempt used.
    expect(lines.filter((l) => l.msg.startsWith("nothing sent")).length).toBeGreaterThan(1);
    for (const line of lines) expect(line.text).not.toContain("test-key-123456");

    // The service comes up at the worker's address: the mark goes, the rows are paid.
    const proxy = await tcpProxy(port, e.sandbox.url);
    try {
      await eventually(
        async () => (await campaignStatus(e.ledger, "s")).stalled === null,
        "the mark removed",
      );
      await eventually(
        async () => (await campaignStatus(e.ledger, "s")).completed === 4,
        "every row completed",
      );
      expect(
        lines.filter((l) => l.msg.startsWith(`the service at ${url} answers again`)),
      ).toHaveLength(1);
      expect((await e.ledger.campaigns.meta("s")).stalled_reason).toBeUndefined();
      expect(await text(`${dashboard.url}campaigns/s`)).not.toContain("cannot reach the service");
      // A scrape reads the campaigns again after a second.
      await eventually(
        async () => !(await text(metrics!.url)).includes('giftjobs_campaign_stalled{campaign="s"'),
        "the metric's series gone",
        10_000,
      );
      await envs.stopWorkers();
    } finally {
      await proxy.close();
    }
  }, 120_000);

  it("a running campaign with rows to send and no live order worker is stalled: no_worker", async () => {
    const e = await envs.setup("stall-none");
    const file = join(e.dataDir, "orders.csv");
    await writeFile(file, sampleCsv(e.index, { rows: 3 }));
    await importCampaign({ file, campaign: "n" }, depsOf(e));
    // The same rows as n's, held: recorded knowingly (docs/architecture/repeats.md).
    await importCampaign({ file, campaign: "h", hold: true, allowRepeats: true }, depsOf(e));
    const beats = new WorkerBeats(e.redis, e.config.prefix);

    const { status, listed } = await cliViews(e, "n");
    for (const view of [status, listed])
      expect(view.stalled).toEqual({
        reason: "no_worker",
        since: null,
        message: "no worker is running: start one with `giftjobs worker`",
      });
    const held = await giftjobs(e, ["orders", "status", "--campaign", "h", "--json"]);
    expect(JSON.parse(held.stdout).stalled).toBeNull();
    const shown = await giftjobs(e, ["orders", "status", "--campaign", "n"]);
    expect(shown.stdout).toContain(
      "  STALLED (no_worker): no worker is running: start one with `giftjobs worker`\n",
    );
    const table = await giftjobs(e, ["orders", "list"]);
    expect(table.stdout).toMatch(/^CAMPAIGN .* STALLED$/m);
    expect(table.stdout).toMatch(/^n .* no_worker$/m);
    expect(table.stdout).toContain(
      "campaign n is STALLED: no worker is running: start one with `giftjobs worker`\n",
    );
    dashboard = await startDashboard({ config: e.config, port: 0 });
    expect(await text(`${dashboard.url}campaigns/n`)).toContain(
      "no worker is running: start one with `giftjobs worker`",
    );
    const overview = (await (await fetch(`${dashboard.url}campaigns.json`)).json()) as {
      campaigns: { campaign: string; stalled: { reason: string } | null }[];
    };
    expect(overview.campaigns.find((c) => c.campaign === "n")?.stalled?.reason).toBe("no_worker");
    metrics = await startMetrics({ config: e.config, port: 0 });
    const scraped = await text(metrics.url);
    expect(scraped).toContain('giftjobs_campaign_stalled{campaign="n",reason="no_worker"} 1');
    expect(scraped).not.toContain('giftjobs_campaign_stalled{campaign="h"');

    // A worker serving only the catalog sends no order: still no_worker.
    await envs.work(e, { queues: ["catalog"], timings: { ...FAST_TIMINGS, heartbeatMs: 200 } });
    expect((await beats.alive()).map((b) => b.queues)).toEqual([["catalog"]]);
    expect((await campaignStatus(e.ledger, "n", beats)).stalled?.reason).toBe("no_worker");
    await envs.stopWorkers();
    expect(await beats.alive()).toEqual([]);

    // An order worker's beat: not stalled while it lasts; stalled again once it runs out,
    // without anyone removing it (a worker killed without a stop).
    await beats.beat(
      {
        id: "gone-host:1:abc",
        hostname: "gone-host",
        pid: 1,
        queues: ["orders"],
        started_at: new Date().toISOString(),
        beat_at: new Date().toISOString(),
      },
      1500,
    );
    expect((await campaignStatus(e.ledger, "n", beats)).stalled).toBeNull();
    await eventually(
      async () => (await campaignStatus(e.ledger, "n", beats)).stalled?.reason === "no_worker",
      "no_worker once the beat ran out",
      10_000,
    );
    expect(await text(metrics.url)).toContain(
      'giftjobs_campaign_stalled{campaign="n",reason="no_worker"} 1',
    );
  }, 120_000);
});

import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { campaignStatus } from "../../src/campaigns/status.js";
import { loadCurrentIndex } from "../../src/catalog/current-snapshot.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { silentLogger } from "../../src/log.js";
import { commandClient, connectRedis, type RedisConnection } from "../../src/redis/connection.js";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.js";
import { OrderIndex } from "../../src/webhooks/order-index.js";
import { type RunningReceiver, startWebhookReceiver } from "../../src/webhooks/webhook-receiver.js";
import { type CliChild, exited, runCli, spawnCli } from "../helpers/cli.js";
import { writeLargeCsv } from "../helpers/csv.js";
import { ledgerOrder, ledgerRow } from "../helpers/ledger-fixtures.js";
import { type RedisCluster, startRedisCluster } from "../helpers/redis-cluster.js";
import { redisAt } from "../helpers/redis-server.js";
import { sandboxOrders } from "../helpers/sandbox.js";
import { tmpDir } from "../helpers/tmp-dir.js";
import { eventually } from "../helpers/wait-for.js";
import { postSigned } from "../helpers/webhook-env.js";
import { newWebhookSecret } from "../helpers/webhook-inbox.js";

const ROWS = 1000;
const CAMPAIGN = "big";

describe("cluster mode settings", () => {
  it("refuses a prefix without a hash tag in one line that names the prefix to use, before connecting", async () => {
    const run = await runCli(["orders", "list"], {
      // Nothing listens there: the refusal comes before any connection.
      GIFTJOBS_REDIS_CLUSTER_NODES: "127.0.0.1:1,127.0.0.1:2",
      GIFTJOBS_PREFIX: "acme-jobs",
    });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(
      'giftjobs: error: GIFTJOBS_PREFIX: "acme-jobs" has no hash tag, which a Redis Cluster needs (GIFTJOBS_REDIS_CLUSTER_NODES is set): use "{acme-jobs}"\n',
    );
  });
});

/** Deletes every key under `prefix`: all in the prefix's slot, so on one master. */
async function deleteKeys(cluster: RedisCluster, prefix: string): Promise<void> {
  const { master } = await cluster.slotOwner(prefix);
  const keys = (await redisAt(master.port, "KEYS", `${prefix}*`)) as string[];
  if (keys.length > 0) await redisAt(master.port, "DEL", ...keys);
}

describe("on a Redis Cluster of 3 masters and 3 replicas", () => {
  // One cluster for the file's tests (its six servers and their folders go after the file,
  // test/helpers/cleanup.ts): each test has a prefix of its own, whose keys go after it, so the
  // other masters hold none of them when the first test counts its keys per master.
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await startRedisCluster();
  });
  // The running test's prefix.
  let testPrefix: string | undefined;
  let sandbox: Sandbox | undefined;
  let watcher: RedisConnection | undefined;
  let connection: RedisConnection | undefined;
  let receiver: RunningReceiver | undefined;
  const children: CliChild[] = [];
  // What the test was doing, for the failure message.
  let step = "";

  afterEach(async (context) => {
    if (context.task.result?.state === "fail") {
      console.error(`--- failed while: ${step}`);
      for (const child of children)
        console.error(`--- worker ${child.pid}\n${child.output().slice(-4000)}`);
    }
    for (const child of children) child.kill("SIGKILL");
    await Promise.all(children.splice(0).map(exited));
    watcher?.disconnect();
    watcher = undefined;
    await sandbox?.close();
    sandbox = undefined;
    await receiver?.close();
    receiver = undefined;
    connection?.disconnect();
    connection = undefined;
    if (testPrefix) await deleteKeys(cluster, testPrefix);
    testPrefix = undefined;
  });

  it("schedules the catalog sync, imports through one node, sends through another, survives a failover and a killed master: each row paid once", async () => {
    sandbox = await startSandbox({
      products: 120,
      seed: 7,
      orderRateLimit: 6000,
      asyncCompleteMs: 200,
    });
    const dataDir = await tmpDir("cluster-data");
    const prefix = `{gjtest-cluster-${randomBytes(4).toString("hex")}}`;
    testPrefix = prefix;
    // Seeds outside the shard that holds giftjobs' slot: every command of the import and the
    // worker is first sent to a node that answers MOVED, and neither seed is killed below.
    const shard = await cluster.slotOwner(prefix);
    const others = cluster.nodes.filter((n) => n !== shard.master && !shard.replicas.includes(n));
    const common = {
      GIFTJOBS_API_URL: sandbox.url,
      GIFTJOBS_API_KEY: "test-key-123456",
      GIFTJOBS_PREFIX: prefix,
      GIFTJOBS_DATA_DIR: dataDir,
      // 80 orders a second, under the sandbox's 100: the 1,000 rows take about 13 s, the
      // failover (at 20%) and the killed master (at 50%) fall in their middle.
      GIFTJOBS_ORDER_RATE_LIMIT: "4800",
      GIFTJOBS_LOG_LEVEL: "warn",
    };
    const importEnv = { ...common, GIFTJOBS_REDIS_CLUSTER_NODES: cluster.seeds([others[0]!]) };
    const workerEnv = { ...common, GIFTJOBS_REDIS_CLUSTER_NODES: cluster.seeds([others[1]!]) };

    const worker = spawnCli(
      ["worker", "--queues", "orders,catalog", "--concurrency", "8", "--lock-duration", "3000"],
      workerEnv,
    );
    children.push(worker);

    // The nightly sync's scheduler, lock and job, through the cluster: every second here.
    step = "catalog schedule";
    const scheduled = await runCli(["catalog", "schedule", "--cron", "* * * * * *"], importEnv);
    expect(scheduled.stderr).toBe("");
    expect(scheduled.code).toBe(0);
    await eventually(
      async () => existsSync(join(dataDir, "catalog", "current.json")),
      "a snapshot published by the catalog job",
      60_000,
    );
    expect((await runCli(["catalog", "unschedule"], importEnv)).code).toBe(0);

    const file = join(dataDir, "orders.csv");
    await writeLargeCsv((await loadCurrentIndex(dataDir))!, file, ROWS);
    step = "import";
    const imported = await runCli(
      ["orders", "import", file, "--campaign", CAMPAIGN, "--yes", "--json"],
      importEnv,
    );
    expect(imported.stderr).toBe("");
    expect(imported.code).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({ rows: ROWS, enqueued: ROWS });

    // The test's own view of the ledger. A read that gets no answer within 3 s (a command
    // caught on the connection to the master killed below) is given up with its connection.
    const openWatcher = () => {
      const connection = connectRedis({
        redisUrl: "redis://127.0.0.1:6379",
        redisClusterNodes: [{ host: "127.0.0.1", port: others[0]!.port }],
      });
      connection.on("error", () => {});
      return connection;
    };
    watcher = openWatcher();
    const done = async () => {
      const ledger = new Ledger(commandClient(watcher!), prefix);
      let timer: NodeJS.Timeout | undefined;
      try {
        const s = await Promise.race([
          campaignStatus(ledger, CAMPAIGN),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error("no answer")), 3000);
          }),
        ]);
        return s.completed + s.failed_final + s.failed_uncertain;
      } catch {
        watcher?.disconnect();
        watcher = openWatcher();
        return 0;
      } finally {
        clearTimeout(timer);
      }
    };
    const reached = (share: number) =>
      eventually(
        async () => (await done()) >= ROWS * share,
        `${share * 100}% of the rows done`,
        120_000,
      );

    // A replica takes over by hand (CLUSTER FAILOVER: the old master steps down cleanly) ...
    step = "waiting for 20%";
    await reached(0.2);
    const before = await cluster.slotOwner(prefix);
    step = "CLUSTER FAILOVER";
    expect(await redisAt(before.replicas[0]!.port, "CLUSTER", "FAILOVER")).toBe("OK");
    await eventually(
      async () => (await cluster!.slotOwner(prefix)).master === before.replicas[0],
      "the replica to serve the slot",
      30_000,
    );
    // ... then the new master dies without a word, and the old one is promoted back.
    step = "waiting for 50%";
    await reached(0.5);
    const victim = (await cluster.slotOwner(prefix)).master;
    step = "killing the master";
    await victim.kill();
    await eventually(
      async () => (await cluster!.slotOwner(prefix).catch(() => undefined))?.master !== victim,
      "a replica to be promoted after the master was killed",
      60_000,
    );

    step = "orders status --wait";
    const waited = await runCli(
      ["orders", "status", "--campaign", CAMPAIGN, "--wait", "--timeout", "180", "--json"],
      importEnv,
    );
    expect(waited.code, waited.stdout + waited.stderr).toBe(0);
    expect(JSON.parse(waited.stdout)).toMatchObject({
      state: "done",
      total: ROWS,
      completed: ROWS,
      queued: 0,
      in_flight: 0,
      submitted: 0,
      failed_final: 0,
      failed_uncertain: 0,
    });

    const reportFile = join(dataDir, "report.csv");
    step = "orders report";
    const reported = await runCli(
      ["orders", "report", "--campaign", CAMPAIGN, "--out", reportFile],
      importEnv,
    );
    expect(reported.code).toBe(0);
    const lines = (await readFile(reportFile, "utf8")).trimEnd().split("\n").slice(1);
    expect(lines).toHaveLength(ROWS);
    expect(lines.every((line) => line.includes(",completed,"))).toBe(true);

    // Every row in exactly one order item, counted at the service.
    step = "counting at the sandbox";
    const orders = await sandboxOrders(sandbox);
    const emails = orders.flatMap((o) => o.items.map((i) => i.distribution_method.email_address));
    expect(emails).toHaveLength(ROWS);
    expect(new Set(emails).size).toBe(ROWS);

    // Every key of the installation sits in the prefix's slot: the other masters hold none.
    step = "counting keys per master";
    const owner = (await cluster.slotOwner(prefix)).master;
    for (const node of cluster.nodes.filter((n) => n !== owner && n.child())) {
      const role = (await redisAt(node.port, "ROLE")) as [string];
      if (role[0] === "master") expect(await redisAt(node.port, "DBSIZE")).toBe(0);
    }
    expect(Number(await redisAt(owner.port, "DBSIZE"))).toBeGreaterThan(0);

    step = "stopping the worker";
    worker.kill("SIGTERM");
    expect(await exited(worker)).toBe(0);
  }, 420_000);

  it("the webhook receiver claims a message, finds its order and ends it, through a node that does not hold the slot", async () => {
    const prefix = `{gjtest-cluster-wh-${randomBytes(4).toString("hex")}}`;
    testPrefix = prefix;
    const shard = await cluster.slotOwner(prefix);
    // A running one: the test above kills a master.
    const other = cluster.nodes.find(
      (n) => n.child() && n !== shard.master && !shard.replicas.includes(n),
    )!;
    connection = connectRedis({
      redisUrl: "redis://127.0.0.1:6379",
      redisClusterNodes: [{ host: "127.0.0.1", port: other.port }],
    });
    const redis = commandClient(connection);
    const ledger = new Ledger(redis, prefix);
    await ledger.orders.record("c", [
      { order: ledgerOrder("c", ["a"]), rows: [["a", ledgerRow(2)]] },
    ]);
    await ledger.orders.start({ campaign: "c", number: 1, patch: { attempts: 1 } });
    await new OrderIndex(redis, prefix).remember("O-1", "c", 1);
    await ledger.orders.transition({
      campaign: "c",
      number: 1,
      from: ["in_flight"],
      to: "submitted",
      patch: { order_id: "O-1" },
    });
    const secret = newWebhookSecret();
    receiver = await startWebhookReceiver({
      redis,
      prefix,
      dataDir: await tmpDir("cluster-wh"),
      secret,
      log: silentLogger,
      port: 0,
    });
    const message = { id: "O-1", status: "FAILED" };
    expect(await postSigned(receiver.url, secret, message, { id: "msg_1" })).toEqual({
      status: 200,
      result: "applied",
    });
    expect(await ledger.orders.getOrder("c", 1)).toMatchObject({ status: "failed_final" });
    expect(await postSigned(receiver.url, secret, message, { id: "msg_1" })).toEqual({
      status: 200,
      result: "duplicate",
    });
    expect(await new OrderIndex(redis, prefix).size()).toBe(0);
  });
});

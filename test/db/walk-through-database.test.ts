// Issue #29's "done when": the README walk-through with GIFTJOBS_DATABASE_URL set, every step a
// real `giftjobs` child process (db migrate, catalog sync and diff, orders import, a worker, the
// webhook receiver) against the embedded sandbox over HTTP, real Redis and real PostgreSQL. The
// catalog and the journal end up in PostgreSQL, not in the data dir, and a second process with an
// empty data dir of its own imports against the same catalog and sees the product.update.
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { campaignStatus } from "../../src/campaigns/status.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.js";
import { type CliChild, type CliRun, exited, runCli, spawnCli } from "../helpers/cli.js";
import { useTestDatabase } from "../helpers/database.js";
import { cleanPrefix, REDIS_URL, testRedis, uniquePrefix } from "../helpers/redis.js";
import { control, isLiveOrderable, sandboxOrders } from "../helpers/sandbox.js";
import { tmpDir } from "../helpers/tmp-dir.js";
import { eventually, waitFor } from "../helpers/wait-for.js";
import { newWebhookSecret } from "../helpers/webhook-inbox.js";

const redis = testRedis();
const children: CliChild[] = [];
const prefixes: string[] = [];
let sandbox: Sandbox | undefined;
afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    child.kill("SIGTERM");
    await exited(child);
  }
  for (const prefix of prefixes.splice(0)) await cleanPrefix(redis, prefix);
  await sandbox?.close();
  sandbox = undefined;
});

/** Every file below `dir`, as paths relative to it. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath ?? e.path, e.name).slice(dir.length + 1))
    .sort();
}

/** The files that would hold a catalog snapshot or an order journal in a data dir. */
const SNAPSHOT_OR_JOURNAL =
  /(^|\/)(products\.json|manifest\.json|index\.|diff\.json|current\.json|orders\.ndjson|order-tags)/;

describe("the README walk-through with GIFTJOBS_DATABASE_URL", () => {
  const db = useTestDatabase("walk_through", { migrated: false });

  it("sync, diff, import, send and a product.update keep the catalog and journal in PostgreSQL; a second process with an empty data dir sees them", {
    timeout: 300_000,
  }, async () => {
    sandbox = await startSandbox({ products: 120, seed: 7, port: 0, asyncCompleteMs: 50 });
    const s = sandbox;
    const prefix = uniquePrefix("walk-db");
    const otherPrefix = uniquePrefix("walk-db-other");
    prefixes.push(prefix, otherPrefix);
    const dataDir = await tmpDir("walk-db");
    const otherDir = await tmpDir("walk-db-other");
    const base = {
      GIFTJOBS_API_URL: s.url,
      GIFTJOBS_API_KEY: "test-key-123456",
      GIFTJOBS_REDIS_URL: REDIS_URL,
      GIFTJOBS_PREFIX: prefix,
      GIFTJOBS_DATA_DIR: dataDir,
      GIFTJOBS_LOG_LEVEL: "warn",
      ...db.env,
    };
    const other = { ...base, GIFTJOBS_PREFIX: otherPrefix, GIFTJOBS_DATA_DIR: otherDir };
    const giftjobs = (args: string[], env: Record<string, string> = base): Promise<CliRun> =>
      runCli(args, env);
    const ok = async (args: string[], env?: Record<string, string>): Promise<CliRun> => {
      const run = await giftjobs(args, env);
      expect({ args, code: run.code, stderr: run.stderr }).toEqual({
        args,
        code: 0,
        stderr: run.stderr,
      });
      return run;
    };

    // Three LIVE open USD gift cards: two ordered, one changed by a product.update.
    const cards = s.state.catalog.products.filter(
      (p) =>
        isLiveOrderable(p) && p.currency === "USD" && p.gift_card?.denominations.type === "open",
    );
    expect(cards.length).toBeGreaterThanOrEqual(3);
    const [first, second, pushed] = cards as [
      (typeof cards)[0],
      (typeof cards)[0],
      (typeof cards)[0],
    ];
    const face = (p: typeof first) => p.gift_card!.denominations.minimum_value;
    const changed = s.state.catalog.products.find(
      (p) => ![first.code, second.code, pushed.code].includes(p.code) && p.gift_card,
    )!;

    expect((await ok(["db", "migrate"])).stdout).toMatch(/^applied 0002_journal_and_overrides$/m);
    const synced = JSON.parse((await ok(["catalog", "sync", "--json"])).stdout);
    expect(synced).toMatchObject({ products: 120, added: 120 });

    // A catalog change between two syncs, and the diff the second one recorded.
    await control(s, `/_sandbox/products/${changed.code}`, { price_multiplier: "0.1234" });
    await ok(["catalog", "sync"]);
    const diff = JSON.parse((await ok(["catalog", "diff", "--json"])).stdout);
    expect(diff.summary).toMatchObject({ added: 0, removed: 0, changed: 1 });
    expect(JSON.stringify(diff)).toContain(changed.code);

    // An import of a small file, sent by a worker: each row paid once.
    const csv = join(dataDir, "orders.csv");
    await writeFile(
      csv,
      "email,product_code,face_value,reference\n" +
        `jane.doe@example.com,${first.code},${face(first)},emp-0001\n` +
        `bob@example.com,${second.code},${face(second)},emp-0002\n`,
    );
    const imported = await ok(["orders", "import", csv, "--campaign", "spring", "--yes"]);
    expect(imported.stdout).toMatch(/rows 2: 2 valid, 0 invalid/);
    const worker = spawnCli(["worker", "--queues", "orders"], base);
    children.push(worker);
    const ledger = new Ledger(redis, prefix);
    await eventually(
      async () => (await campaignStatus(ledger, "spring")).completed === 2,
      `the worker completing campaign spring (worker said: ${worker.output()})`,
      60_000,
    );
    worker.kill("SIGTERM");
    expect(await exited(worker)).toBe(0);
    const paid = await sandboxOrders(s);
    const emails = paid.flatMap((o) => o.items.map((i) => i.distribution_method.email_address));
    expect(emails.sort()).toEqual(["bob@example.com", "jane.doe@example.com"]);

    // A product.update, taken by `giftjobs webhooks`, recorded in the database.
    const secret = newWebhookSecret();
    const receiver = spawnCli(["webhooks", "--port", "0"], {
      ...base,
      GIFTJOBS_WEBHOOK_SECRET: secret,
    });
    children.push(receiver);
    const url = await waitFor(
      async () => /listening on (\S+)/.exec(receiver.printed().stdout)?.[1],
      30_000,
      "the receiver's URL",
    );
    await s.setWebhooks({ webhookUrl: url, webhookSecret: secret, webhookRetryBaseMs: 50 });
    await control(s, `/_sandbox/products/${pushed.code}`, { is_orderable: false });
    await eventually(async () => {
      const { rows } = await db.pool.query(
        "SELECT is_orderable FROM product_overrides WHERE product_code = $1",
        [pushed.code],
      );
      return rows[0]?.is_orderable === false;
    }, "the product.update in product_overrides");

    // The second process: an empty data dir of its own, the same database.
    expect(await filesUnder(otherDir)).toEqual([]);
    const shownHere = JSON.parse((await ok(["catalog", "show", "--json"])).stdout);
    const shownThere = JSON.parse((await ok(["catalog", "show", "--json"], other)).stdout);
    expect(shownThere).toEqual(shownHere);
    const pushedThere = shownThere.find((p: { code: string }) => p.code === pushed.code);
    expect(pushedThere).toMatchObject({ is_orderable: false, product_update: {} });
    expect(JSON.parse((await ok(["catalog", "diff", "--json"], other)).stdout)).toEqual(diff);

    const refusedCsv = join(otherDir, "pushed.csv");
    await writeFile(
      refusedCsv,
      `email,product_code,face_value\nann@example.com,${pushed.code},${face(pushed)}\n`,
    );
    const refused = await giftjobs(["orders", "import", refusedCsv, "--campaign", "autumn"], other);
    expect(refused.code).toBe(2);
    expect(refused.stdout + refused.stderr).toContain(`product ${pushed.code} is not orderable`);
    const acceptedCsv = join(otherDir, "more.csv");
    await writeFile(
      acceptedCsv,
      `email,product_code,face_value,reference\nann@example.com,${first.code},${face(first)},emp-0003\n`,
    );
    await ok(["orders", "import", acceptedCsv, "--campaign", "autumn", "--hold"], other);

    // The catalog and the journal are PostgreSQL's: its tables hold them, the data dirs do not.
    const count = async (sql: string): Promise<number> =>
      (await db.pool.query(`SELECT count(*)::int AS n FROM ${sql}`)).rows[0].n;
    expect(await count("catalog_snapshots")).toBe(2);
    expect(await count("current_products")).toBe(120);
    expect(await count(`recent_changes WHERE code = '${changed.code}'`)).toBeGreaterThan(0);
    const journal = await db.pool.query(
      "SELECT campaign, count(*)::int AS orders FROM order_journal GROUP BY campaign ORDER BY campaign",
    );
    expect(journal.rows).toEqual([
      { campaign: "autumn", orders: 1 },
      { campaign: "spring", orders: expect.any(Number) },
    ]);
    for (const dir of [dataDir, otherDir]) {
      const kept = (await filesUnder(dir)).filter((f) => SNAPSHOT_OR_JOURNAL.test(f));
      expect({ dir, kept }).toEqual({ dir, kept: [] });
    }
  });
});

// product.update with GIFTJOBS_DATABASE_URL set: a `giftjobs webhooks` process records the state
// in PostgreSQL, and another process, with its own Redis prefix and an empty data dir of its
// own, sees it: its import refuses the product, its worker holds the order unsent.
import { access, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { campaignStatus } from "../../src/campaigns/status.js";
import { ProductOverrides } from "../../src/catalog/product-overrides.js";
import { PgProductOverrides } from "../../src/db/product-overrides.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import type { ImportDeps } from "../../src/import/import-types.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { pgStores } from "../../src/stores/pg-stores.js";
import { cliEnvOf, depsOf } from "../helpers/campaign-env.js";
import { type CliChild, exited, runCli, spawnCli } from "../helpers/cli.js";
import { useTestDatabase } from "../helpers/database.js";
import { uniquePrefix } from "../helpers/redis.js";
import { openCard, sandboxOrders } from "../helpers/sandbox.js";
import { tmpDir } from "../helpers/tmp-dir.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { eventually, waitFor } from "../helpers/wait-for.js";
import { pushOrderable } from "../helpers/webhook-env.js";
import { newWebhookSecret } from "../helpers/webhook-inbox.js";

describe("product overrides in PostgreSQL", () => {
  const { setup } = useCampaignEnv({ asyncCompleteMs: 50 });
  const db = useTestDatabase("overrides_shared");
  // Registered after the env's: runs before it, so the children end while it is still there.
  const children: CliChild[] = [];
  afterEach(async () => {
    for (const child of children.splice(0)) {
      if (child.exitCode !== null) continue;
      child.kill("SIGTERM");
      await exited(child);
    }
  });

  it("a receiver records them there; another process with its own data dir and prefix sees them", {
    timeout: 180_000,
  }, async () => {
    const e = await setup("ovr-db");
    const product = openCard(e.sandbox);
    const face = product.gift_card!.denominations.minimum_value;

    // The other machine: a Redis prefix and an empty data dir of its own, the same database
    // (both removed after the test by test/helpers/setup.ts).
    const otherPrefix = uniquePrefix("ovr-db-other");
    const otherDir = await tmpDir("ovr-db-other");
    const otherLedger = new Ledger(e.redis, otherPrefix);
    const otherDeps: ImportDeps = {
      ...depsOf(e),
      ledger: otherLedger,
      stores: pgStores(otherDir, db.database),
    };
    const importOne = async (campaign: string) => {
      const file = join(otherDir, `${campaign}.csv`);
      await writeFile(
        file,
        `email,product_code,face_value\na@example.com,${product.code},${face}\n`,
      );
      return importCampaign({ file, campaign, executionMode: "async" }, otherDeps);
    };
    // The catalog in the database, synced before the change.
    const synced = await runCli(["catalog", "sync"], {
      ...cliEnvOf(e),
      ...db.env,
      GIFTJOBS_LOG_LEVEL: "warn",
    });
    expect(synced.code).toBe(0);
    // Recorded while the product is orderable: its order waits for a worker.
    expect(await importOne("before")).toMatchObject({ enqueued: 1 });

    // This machine's receiver, a process of its own.
    const secret = newWebhookSecret();
    const receiver = spawnCli(["webhooks", "--port", "0"], {
      ...cliEnvOf(e),
      ...db.env,
      GIFTJOBS_WEBHOOK_SECRET: secret,
      GIFTJOBS_LOG_LEVEL: "warn",
    });
    children.push(receiver);
    const url = await waitFor(
      async () => /listening on (\S+)/.exec(receiver.printed().stdout)?.[1],
      20_000,
      "the receiver's URL",
    );
    await e.sandbox.setWebhooks({ webhookUrl: url, webhookSecret: secret, webhookRetryBaseMs: 50 });
    const overrides = new PgProductOverrides(db.database);
    const pushedAt = (await pushOrderable(e.sandbox, overrides, product.code, false)).timestamp;
    // In the database only: the receiver's Redis prefix holds no override.
    expect(await new ProductOverrides(e.redis, e.config.prefix).read()).toEqual({});

    // The other machine's import sees it at once.
    const refused = await importOne("after").catch((error: Error & { result?: unknown }) => error);
    expect(JSON.stringify(refused)).toContain(
      `product ${product.code} is not orderable (product.update of ${pushedAt})`,
    );

    // The other machine's `catalog show` lays it over the database's snapshot.
    const shown = await runCli(["catalog", "show", "--json", "--code", product.code], {
      ...cliEnvOf(e),
      ...db.env,
      GIFTJOBS_PREFIX: otherPrefix,
      GIFTJOBS_DATA_DIR: otherDir,
      GIFTJOBS_LOG_LEVEL: "warn",
    });
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject([
      { code: product.code, is_orderable: false, product_update: { timestamp: pushedAt } },
    ]);

    // The other machine's worker, a process of its own: its product guard holds the order.
    const worker = spawnCli(["worker", "--queues", "orders", "--webhooks"], {
      ...cliEnvOf(e),
      ...db.env,
      GIFTJOBS_PREFIX: otherPrefix,
      GIFTJOBS_DATA_DIR: otherDir,
      GIFTJOBS_LOG_LEVEL: "warn",
    });
    children.push(worker);
    await eventually(
      async () => (await campaignStatus(otherLedger, "before")).state === "paused",
      "the campaign paused by the product guard",
      30_000,
    );
    expect(await otherLedger.campaigns.pausedReason("before")).toMatch(
      new RegExp(`^product_unavailable: .*${product.code}.*not orderable`),
    );
    expect(await sandboxOrders(e.sandbox)).toHaveLength(0);
    worker.kill("SIGTERM");
    expect(await exited(worker)).toBe(0);
    // Nothing was written into the other machine's data dir for the journal.
    const journal = join(otherDir, "campaigns", "before", "orders.ndjson");
    expect(
      await access(journal).then(
        () => true,
        () => false,
      ),
    ).toBe(false);
  });
});

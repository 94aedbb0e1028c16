// `giftjobs db import-journals` (docs/operations.md, "Switching to PostgreSQL"): the order
// journals a data dir kept before GIFTJOBS_DATABASE_URL was set are copied into order_journal,
// once; a campaign journaled in both places is refused in one line; a lost ledger of a moved
// campaign is then re-imported from another machine's empty data dir, rebuilt from the database.
import { appendFile, readFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { PgJournal } from "../../src/db/order-journal.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { journalPath } from "../../src/orders/journal.js";
import { FileJournal } from "../../src/orders/journal-store.js";
import { pgStores } from "../../src/stores/pg-stores.js";
import { type CampaignEnv, campaignEnv, depsOf, giftjobs } from "../helpers/campaign-env.js";
import { csvFile, validCsv } from "../helpers/csv.js";
import { useTestDatabase } from "../helpers/database.js";
import { cleanPrefix } from "../helpers/redis.js";
import { removeDir, tmpDir } from "../helpers/tmp-dir.js";

const ROWS = 200;
const PER_ORDER = 20;
const CAMPAIGN = "moved";

let env: CampaignEnv | undefined;
afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

describe("moving file journals into PostgreSQL", () => {
  const db = useTestDatabase("journal_import");

  async function journalRows(campaign = CAMPAIGN): Promise<number> {
    const { rows } = await db.pool.query(
      "SELECT count(*)::int AS n FROM order_journal WHERE campaign = $1",
      [campaign],
    );
    return rows[0].n;
  }

  it("copies each campaign's journal once, and a lost ledger is rebuilt from it elsewhere", {
    timeout: 180_000,
  }, async () => {
    env = await campaignEnv({}, "journal-import");
    const e = env;
    // Journaled in files: the first half, then the whole file with --append.
    const { text } = validCsv(e.index, ROWS, "emp");
    const lines = text.trimEnd().split("\n");
    const half = await csvFile(e, "half.csv", `${lines.slice(0, 1 + ROWS / 2).join("\n")}\n`);
    const whole = await csvFile(e, "whole.csv", text);
    const options = { campaign: CAMPAIGN, itemsPerOrder: PER_ORDER };
    await importCampaign({ ...options, file: half }, depsOf(e));
    await importCampaign({ ...options, file: whole, append: true }, depsOf(e));
    const fromFile = await new FileJournal(e.dataDir).load(CAMPAIGN);
    expect(fromFile.lines).toBe(ROWS / PER_ORDER);

    const moved = await giftjobs(e, ["db", "import-journals", "--json"], db.env);
    expect(moved.code).toBe(0);
    expect(JSON.parse(moved.stdout)).toEqual({
      data_dir: e.dataDir,
      campaigns: [{ campaign: CAMPAIGN, orders: ROWS / PER_ORDER, outcome: "moved" }],
    });
    const fromDb = await new PgJournal(db.database).load(CAMPAIGN);
    expect(fromDb.lines).toBe(fromFile.lines);
    const { rows: keys } = await db.pool.query(
      "SELECT order_key FROM order_journal WHERE campaign = $1 ORDER BY seq",
      [CAMPAIGN],
    );
    const fileKeys = (await readFile(journalPath(e.dataDir, CAMPAIGN), "utf8"))
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l).k);
    expect(keys.map((r) => r.order_key)).toEqual(fileKeys);

    // Again: nothing moved twice.
    const again = await giftjobs(e, ["db", "import-journals"], db.env);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(
      `0 campaign journals moved from ${e.dataDir}, 1 already in the database\n`,
    );
    expect(await journalRows()).toBe(ROWS / PER_ORDER);

    // The machine is gone (Redis keys and data dir): another, with an empty data dir and the
    // database, imports the whole file again and gets the journal's orders, appending nothing.
    await cleanPrefix(e.redis, e.config.prefix);
    await removeDir(e.dataDir);
    const other = await tmpDir("journal-import-other");
    const copy = await csvFile({ ...e, dataDir: other }, "whole.csv", text);
    const rebuilt = await importCampaign(
      { ...options, file: copy, append: true },
      { ...depsOf(e), stores: pgStores(other, db.database) },
    );
    expect(rebuilt).toMatchObject({ enqueued: ROWS, orders: ROWS / PER_ORDER, already_known: 0 });
    expect(await journalRows()).toBe(ROWS / PER_ORDER);
  });

  it("refuses a campaign journaled in both places, naming it; other campaigns are moved", {
    timeout: 120_000,
  }, async () => {
    env = await campaignEnv({}, "journal-import-both");
    const e = env;
    const { text } = validCsv(e.index, 40, "emp");
    const file = await csvFile(e, "orders.csv", text);
    await importCampaign({ file, campaign: "a-first", itemsPerOrder: 10 }, depsOf(e));
    await importCampaign(
      { file, campaign: "b-both", itemsPerOrder: 10, allowRepeats: true },
      depsOf(e),
    );
    // b-both also has a line in the database (an import after the switch).
    const fileLines = (await readFile(journalPath(e.dataDir, "b-both"), "utf8")).split("\n");
    await new PgJournal(db.database).append("b-both", [JSON.parse(fileLines[0]!)]);

    const run = await giftjobs(e, ["db", "import-journals"], db.env);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `moved campaign a-first (4 orders)\ngiftjobs: error: campaign b-both: table ${db.schema}.order_journal holds 1 order of it, not the 4 of ${journalPath(e.dataDir, "b-both")}: it was journaled in both places, so nothing of it is moved (keep the data dir for it; docs/operations.md, "Switching to PostgreSQL")\n`,
    );
    expect(await journalRows("a-first")).toBe(4);
    expect(await journalRows("b-both")).toBe(1);

    // A damaged file moves nothing and names its line (exit 1, as an import reading it would).
    await appendFile(journalPath(e.dataDir, "a-first"), "not json\n");
    const damaged = await giftjobs(e, ["db", "import-journals"], db.env);
    expect(damaged.code).toBe(1);
    expect(damaged.stderr).toMatch(
      new RegExp(`^giftjobs: failed: ${journalPath(e.dataDir, "a-first")} line 5: not valid JSON`),
    );
  });
});

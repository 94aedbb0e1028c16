import { describe, expect, it } from "vitest";
import { openCurrentSnapshot } from "../../src/catalog/current-snapshot.js";
import { databaseCatalogStore } from "../../src/db/catalog-store.js";
import { migrate } from "../../src/db/migrations.js";
import { useCatalogFixture } from "../helpers/catalog-fixture.js";
import { type CliRun, runCli } from "../helpers/cli.js";
import { useTestDatabase } from "../helpers/database.js";
import { control } from "../helpers/sandbox.js";
import { tmpDir } from "../helpers/tmp-dir.js";

const fx = useCatalogFixture({ products: 600, apiKey: "test-key" });
const db = useTestDatabase("catalog_cli", { migrated: false });

/** `giftjobs ARGS` in a child process, the catalog in the test's schema. */
function giftjobs(
  args: string[],
  env: Record<string, string> = {},
  dataDir = fx.dataDir,
): Promise<CliRun> {
  return runCli(args, {
    GIFTJOBS_API_URL: fx.sandbox.url,
    GIFTJOBS_API_KEY: "test-key",
    GIFTJOBS_DATA_DIR: dataDir,
    GIFTJOBS_LOG_LEVEL: "warn",
    ...db.env,
    ...env,
  });
}

describe("giftjobs db and catalog with GIFTJOBS_DATABASE_URL", () => {
  it("refuses a schema not migrated, migrates it, and a second process with its own empty data dir sees the same catalog", {
    timeout: 180_000,
  }, async () => {
    const before = await giftjobs(["catalog", "show"]);
    expect(before.code).toBe(2);
    expect(before.stderr.trim()).toMatch(
      new RegExp(
        `^giftjobs: error: the database schema ${db.schema} has no giftjobs tables, this giftjobs needs version \\d+: run giftjobs db migrate$`,
      ),
    );
    expect((await giftjobs(["db", "status"])).code).toBe(1);
    const migrated = await giftjobs(["db", "migrate"]);
    expect(migrated.code).toBe(0);
    expect(migrated.stdout).toMatch(/^applied 0001_catalog$/m);
    const again = await giftjobs(["db", "migrate"]);
    expect(again.stdout.trim()).toMatch(
      new RegExp(`^schema ${db.schema} is current \\(version \\d+\\)$`),
    );
    expect((await giftjobs(["db", "status"])).code).toBe(0);

    const synced = await giftjobs(["catalog", "sync", "--json"]);
    expect(synced.code).toBe(0);
    expect(JSON.parse(synced.stdout)).toMatchObject({ products: 600, added: 600 });

    const otherDir = await tmpDir("catalog-other");
    const shown = await giftjobs(["catalog", "show", "--json"], {}, otherDir);
    expect(shown.code).toBe(0);
    const products = JSON.parse(shown.stdout) as { code: string }[];
    expect(products.map((p) => p.code)).toEqual(
      fx.sandbox.state.catalog.products.map((p) => p.code),
    );
    const diff = await giftjobs(["catalog", "diff", "--json"], {}, otherDir);
    expect(JSON.parse(diff.stdout).summary).toMatchObject({ added: 600, removed: 0 });
  });

  it("import-files moves file snapshots in, once", { timeout: 180_000 }, async () => {
    await migrate(db.database);
    await fx.sync();
    const code = fx.sandbox.state.catalog.products[3]!.code;
    await control(fx.sandbox, `/_sandbox/products/${code}`, { is_orderable: false });
    await fx.sync();
    const fileDiff = await (await openCurrentSnapshot(fx.dataDir))!.diff();

    const first = await giftjobs(["catalog", "import-files", "--json"]);
    expect(first.code).toBe(0);
    const result = JSON.parse(first.stdout);
    expect(result.imported).toHaveLength(2);
    expect(result.current).toBe(fileDiff!.to);
    const second = JSON.parse((await giftjobs(["catalog", "import-files", "--json"])).stdout);
    expect(second).toMatchObject({ imported: [], current: fileDiff!.to });
    expect(second.skipped).toHaveLength(2);

    const store = databaseCatalogStore(fx.dataDir, db.database);
    expect(await (await openCurrentSnapshot(store))!.diff()).toEqual(fileDiff);
    const { rows } = await db.pool.query(
      "SELECT code, field, new_value FROM recent_changes WHERE change = 'changed'",
    );
    expect(rows).toEqual([{ code, field: "is_orderable", new_value: false }]);
    // The next sync into the database compares with the imported snapshot.
    const synced = await fx.sync({ store });
    expect(synced.diff).toMatchObject({
      from: fileDiff!.to,
      summary: { added: 0, removed: 0, changed: 0 },
    });
  });

  it("a refused user or a server that is down: one line naming the setting, no password", {
    timeout: 120_000,
  }, async () => {
    const refused = await giftjobs(["catalog", "show"], {
      GIFTJOBS_DATABASE_URL: "postgres://giftjobs_nobody:hunter2-pw@127.0.0.1:5432/postgres",
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split("\n")).toHaveLength(1);
    expect(refused.stderr).toMatch(
      /^giftjobs: error: GIFTJOBS_DATABASE_URL: PostgreSQL at 127\.0\.0\.1:5432\/postgres refused/,
    );
    expect(refused.stderr).not.toContain("hunter2");
    const down = await giftjobs(["catalog", "sync"], {
      GIFTJOBS_DATABASE_URL: "postgres://postgres:hunter2-pw@127.0.0.1:1/postgres",
    });
    expect(down.code).toBe(1);
    expect(down.stderr.trim()).toBe(
      "giftjobs: error: PostgreSQL at 127.0.0.1:1/postgres does not answer or went away: is it running? (GIFTJOBS_DATABASE_URL)",
    );
    const bad = await giftjobs(["catalog", "show"], {
      GIFTJOBS_DATABASE_URL: "mysql://x:hunter2@h/db",
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toBe(
      'giftjobs: error: GIFTJOBS_DATABASE_URL: must be a postgres:// or postgresql:// URL (got "mysql://***@h/db")',
    );
  });
});

// The demo is self-contained: with GIFTJOBS_DATABASE_URL set it still keeps its catalog and
// journal under its own data dir, says so in one line, and writes nothing into the database
// (docs/commands.md, "The demo").
import { access, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { runDemo } from "../../src/demo/run-demo.js";
import { useTestDatabase } from "../helpers/database.js";
import { freePort } from "../helpers/free-port.js";
import { cleanPrefix, REDIS_URL, testRedis, uniquePrefix } from "../helpers/redis.js";

describe("giftjobs demo with GIFTJOBS_DATABASE_URL set", () => {
  const db = useTestDatabase("demo_no_db");
  const prefix = uniquePrefix("demo-db");
  let dataDir: string;
  afterEach(async () => {
    const redis = testRedis();
    await cleanPrefix(redis, `${prefix}-demo`);
    await redis.quit();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("syncs, journals and sends in its own data dir, says so, never needs the database and leaves the database empty", {
    timeout: 180_000,
  }, async () => {
    dataDir = await mkdtemp(join(tmpdir(), "giftjobs-demo-db-"));
    const configWith = (database: Record<string, string>) =>
      loadConfig({
        env: {
          GIFTJOBS_REDIS_URL: REDIS_URL,
          GIFTJOBS_PREFIX: prefix,
          GIFTJOBS_DATA_DIR: dataDir,
          ...database,
        },
      });
    const lines: string[] = [];
    const log = pino({ level: "warn" }, { write: (line: string) => lines.push(line) });

    // A database that does not answer: the demo's workers would refuse to start if they used it.
    const away = configWith({
      GIFTJOBS_DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/postgres`,
    });
    const first = await runDemo({ config: away, log, rows: 10 });
    expect(first.status).toMatchObject({ total: 10, completed: 10, failed_final: 0 });

    // A real one: nothing is written into it.
    const config = configWith(db.env);
    expect(config.databaseUrl).toBe(db.url);
    const result = await runDemo({ config, log, rows: 20 });
    expect(result.status).toMatchObject({ total: 20, completed: 20, failed_final: 0 });
    const said = lines.map((l) => JSON.parse(l).msg as string);
    expect(
      said.filter((m) => m.startsWith("the demo does not use GIFTJOBS_DATABASE_URL")),
    ).toHaveLength(2);
    // The snapshot is a folder of files under the demo's own data dir.
    expect(result.snapshot.startsWith(join(dataDir, "demo", "catalog"))).toBe(true);
    await access(join(result.snapshot, "manifest.json"));
    for (const table of [
      "catalog_snapshots",
      "catalog_changes",
      "order_journal",
      "order_tags_marker",
      "product_overrides",
    ]) {
      const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM ${table}`);
      expect({ table, rows: rows[0].n }).toEqual({ table, rows: 0 });
    }
  });
});

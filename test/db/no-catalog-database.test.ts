// With GIFTJOBS_DATABASE_URL set, the catalog is read from PostgreSQL only: a schema holding no
// snapshot is named in the line that says so (never the data dir, which holds none either way),
// with the two commands that fill it.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { useTestDatabase } from "../helpers/database.js";
import { freePort } from "../helpers/free-port.js";
import { REDIS_URL, uniquePrefix } from "../helpers/redis.js";
import { tmpDir } from "../helpers/tmp-dir.js";

describe("no catalog in the database", () => {
  const db = useTestDatabase("no_catalog");

  it("orders import, catalog show and orders template name the schema and say what fills it", {
    timeout: 120_000,
  }, async () => {
    const dataDir = await tmpDir("no-catalog-db");
    const env = {
      GIFTJOBS_API_URL: `http://127.0.0.1:${await freePort()}`,
      GIFTJOBS_API_KEY: "test-key-123456",
      GIFTJOBS_REDIS_URL: REDIS_URL,
      GIFTJOBS_PREFIX: uniquePrefix("no-catalog-db"),
      GIFTJOBS_DATA_DIR: dataDir,
      GIFTJOBS_LOG_LEVEL: "warn",
      ...db.env,
    };
    const place = `PostgreSQL schema ${db.schema} (GIFTJOBS_DATABASE_URL)`;
    const fill =
      "run `giftjobs catalog sync` first (or `giftjobs catalog import-files` to move a data dir's snapshots in)";
    const csv = join(dataDir, "orders.csv");
    await writeFile(csv, "email,product_code,face_value\na@example.com,AMZ-US-00225,25.00\n");

    const imported = await runCli(["orders", "import", csv, "--campaign", "spring", "--yes"], env);
    expect(imported.code).toBe(2);
    expect(imported.stderr).toBe(
      `giftjobs: error: no catalog snapshot in ${place}: ${fill}, or pass --no-catalog-check\n`,
    );
    const shown = await runCli(["catalog", "show"], env);
    expect(shown.code).toBe(2);
    expect(shown.stderr).toBe(`giftjobs: error: no catalog snapshot in ${place}; ${fill}\n`);
    const template = await runCli(["orders", "template"], env);
    expect(template.code).toBe(0);
    expect(template.stderr).toBe(
      `note: no catalog snapshot in ${place}: the example row's product code is a placeholder (${fill})\n`,
    );
  });
});

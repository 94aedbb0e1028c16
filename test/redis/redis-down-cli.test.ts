import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { freePort } from "../helpers/free-port.js";
import { removeDir, tmpDir } from "../helpers/tmp-dir.js";

/** Generous: a loaded test machine takes seconds just to start a CLI from the sources. */
const WITHIN_MS = 20_000;

/**
 * A command that needs Redis, run where nothing listens: one plain line, exit 1, within
 * seconds; never ioredis's sentence, never the password of the URL
 * (docs/architecture/redis.md, "Redis outages").
 */
describe("a CLI command whose Redis does not answer", () => {
  let dir: string;
  let env: Record<string, string>;
  let line: string;

  beforeAll(async () => {
    dir = await tmpDir("redis-down");
    const port = await freePort();
    env = {
      GIFTJOBS_REDIS_URL: `redis://:s3cret-pass@127.0.0.1:${port}`,
      // Nothing listens for the service either: Redis must be what the command names.
      GIFTJOBS_API_URL: `http://127.0.0.1:${await freePort()}`,
      GIFTJOBS_API_KEY: "test-key-123456",
      GIFTJOBS_DATA_DIR: dir,
      GIFTJOBS_PREFIX: "gjtest-redis-down",
    };
    line = `giftjobs: error: Redis at 127.0.0.1:${port} does not answer: is it running? (GIFTJOBS_REDIS_URL)\n`;
    await writeFile(
      join(dir, "orders.csv"),
      "email,product_code,face_value\nann@example.com,AMZ-US,10\n",
    );
  });
  afterAll(async () => {
    await removeDir(dir);
  });

  const commands: [string, () => string[]][] = [
    ["orders list", () => ["orders", "list"]],
    ["orders list --json", () => ["orders", "list", "--json"]],
    ["orders status --wait", () => ["orders", "status", "--campaign", "c1", "--wait"]],
    [
      "orders import",
      () => [
        "orders",
        "import",
        join(dir, "orders.csv"),
        "--campaign",
        "c1",
        "--yes",
        "--no-catalog-check",
        "--no-balance-check",
        "--currency",
        "USD",
      ],
    ],
  ];
  for (const [name, args] of commands) {
    it(`${name}: one line, exit 1`, async () => {
      const started = Date.now();
      const run = await runCli(args(), env);
      expect(Date.now() - started).toBeLessThan(WITHIN_MS);
      expect(run.stderr).toBe(line);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe("");
      expect(run.stderr).not.toContain("s3cret");
    }, 30_000);
  }
});

// Every process that keeps the journal or the overrides in PostgreSQL checks the schema at start:
// a worker, the webhook receiver and a command that opens the services refuse, in one line, a
// schema not migrated, and say when PostgreSQL does not answer, before anything is done.
import { describe, expect, it } from "vitest";
import { knownMigrations } from "../../src/db/migrations.js";
import { runCli } from "../helpers/cli.js";
import { useTestDatabase } from "../helpers/database.js";
import { freePort } from "../helpers/free-port.js";
import { REDIS_URL, uniquePrefix } from "../helpers/redis.js";
import { tmpDir } from "../helpers/tmp-dir.js";
import { newWebhookSecret } from "../helpers/webhook-inbox.js";

const COMMANDS = [
  ["worker", "--queues", "orders"],
  ["webhooks", "--port", "0"],
  ["orders", "retry", "--campaign", "spring", "--new-key"],
];

describe("a schema not migrated", () => {
  const db = useTestDatabase("processes_schema", { migrated: false });

  async function env(): Promise<Record<string, string>> {
    return {
      GIFTJOBS_API_URL: `http://127.0.0.1:${await freePort()}`,
      GIFTJOBS_API_KEY: "test-key-123456",
      GIFTJOBS_REDIS_URL: REDIS_URL,
      GIFTJOBS_PREFIX: uniquePrefix("schema-check"),
      GIFTJOBS_DATA_DIR: await tmpDir("schema-check"),
      GIFTJOBS_WEBHOOK_SECRET: newWebhookSecret(),
      GIFTJOBS_LOG_LEVEL: "warn",
      ...db.env,
    };
  }

  it("is refused by the worker, the receiver and orders retry, in one line", {
    timeout: 120_000,
  }, async () => {
    const base = await env();
    for (const args of COMMANDS) {
      const run = await runCli(args, base);
      expect({ args, code: run.code }).toEqual({ args, code: 2 });
      expect(run.stderr.trim()).toBe(
        `giftjobs: error: the database schema ${db.schema} has no giftjobs tables, this giftjobs needs version ${knownMigrations().length}: run giftjobs db migrate`,
      );
    }
  });

  it("PostgreSQL that does not answer: exit 1, one line naming the setting, no password", {
    timeout: 120_000,
  }, async () => {
    const port = await freePort();
    const url = `postgres://giftjobs:s3cret-pw@127.0.0.1:${port}/postgres`;
    const base = { ...(await env()), GIFTJOBS_DATABASE_URL: url };
    for (const args of COMMANDS) {
      const run = await runCli(args, base);
      expect({ args, code: run.code }).toEqual({ args, code: 1 });
      expect(run.stderr.trim()).toBe(
        `giftjobs: error: PostgreSQL at 127.0.0.1:${port}/postgres does not answer or went away: is it running? (GIFTJOBS_DATABASE_URL)`,
      );
      expect(run.stderr).not.toContain("s3cret-pw");
    }
  });
});

// docs/operations.md, "PostgreSQL down": with GIFTJOBS_DATABASE_URL set and PostgreSQL away, the
// commands that read and change Redis alone (orders list, status, cancel) go on after one warning
// line; an approval (its audit entry cannot be written), an import, a worker and the webhook
// receiver refuse in one line, exit 1, before anything.
import { afterEach, describe, expect, it } from "vitest";
import { knownMigrations } from "../../src/db/migrations.js";
import { type CampaignEnv, campaignEnv, giftjobs } from "../helpers/campaign-env.js";
import { csvFile, validCsv } from "../helpers/csv.js";
import { uniqueSchema, useTestDatabase } from "../helpers/database.js";
import { freePort } from "../helpers/free-port.js";
import { newWebhookSecret } from "../helpers/webhook-inbox.js";

let env: CampaignEnv | undefined;
afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

describe("PostgreSQL down", () => {
  const db = useTestDatabase("db_down_commands");

  it("orders list, status and cancel warn and go on; approve, import, worker and webhooks refuse", {
    timeout: 240_000,
  }, async () => {
    env = await campaignEnv({}, "db-down");
    const e = env;
    const up = { ...db.env };
    expect((await giftjobs(e, ["catalog", "sync"], up)).code).toBe(0);
    const { text } = validCsv(e.index, 3, "emp");
    const file = await csvFile(e, "orders.csv", text);
    const held = await giftjobs(
      e,
      ["orders", "import", file, "--campaign", "spring", "--hold"],
      up,
    );
    expect(held.code).toBe(0);

    const port = await freePort();
    const down = {
      GIFTJOBS_DATABASE_URL: `postgres://giftjobs:s3cret-pw@127.0.0.1:${port}/postgres`,
      GIFTJOBS_DATABASE_SCHEMA: db.schema,
      GIFTJOBS_WEBHOOK_SECRET: newWebhookSecret(),
    };
    const away = `PostgreSQL at 127.0.0.1:${port}/postgres does not answer or went away: is it running? (GIFTJOBS_DATABASE_URL)`;
    const warning = `giftjobs: warning: ${away}; this command reads Redis only and goes on (imports, workers and the webhook receiver refuse until it is fixed)\n`;

    const list = await giftjobs(e, ["orders", "list", "--json"], down);
    expect({ code: list.code, stderr: list.stderr }).toEqual({ code: 0, stderr: warning });
    expect(JSON.parse(list.stdout)).toMatchObject([{ campaign: "spring", state: "held" }]);
    const status = await giftjobs(e, ["orders", "status", "--campaign", "spring"], down);
    expect({ code: status.code, stderr: status.stderr }).toEqual({ code: 0, stderr: warning });
    expect(status.stdout).toMatch(/^campaign spring \(held\): 0 of 3 rows done/);
    // An approval starts spending: not without its audit entry (docs/architecture/audit.md).
    const approved = await giftjobs(e, ["orders", "approve", "--campaign", "spring"], down);
    expect({ code: approved.code, stderr: approved.stderr }).toEqual({
      code: 1,
      stderr: `giftjobs: error: ${away}\n`,
    });
    expect((await e.ledger.meta("spring")).state).toBe("held");
    // A cancel stops spending: it goes on, unrecorded, and says so.
    const cancelled = await giftjobs(e, ["orders", "cancel", "--campaign", "spring"], down);
    expect({ code: cancelled.code, stderr: cancelled.stderr }).toEqual({
      code: 0,
      stderr: `giftjobs: warning: the audit trail cannot be written (${away}); this cancel goes on unrecorded\n${warning}`,
    });
    expect(cancelled.stdout).toMatch(/^campaign spring cancelled/);

    for (const args of [
      ["orders", "import", file, "--campaign", "autumn", "--yes"],
      ["worker", "--queues", "orders"],
      ["webhooks", "--port", "0"],
    ]) {
      const run = await giftjobs(e, args, down);
      expect({ args, code: run.code, stderr: run.stderr }).toEqual({
        args,
        code: 1,
        stderr: `giftjobs: error: ${away}\n`,
      });
      expect(run.stdout).not.toContain("s3cret-pw");
    }
    // A schema not migrated is warned of the same way.
    const bare = uniqueSchema("db_down_bare");
    const listed = await giftjobs(e, ["orders", "list"], { ...up, GIFTJOBS_DATABASE_SCHEMA: bare });
    expect({ code: listed.code, stderr: listed.stderr }).toEqual({
      code: 0,
      stderr: `giftjobs: warning: the database schema ${bare} has no giftjobs tables, this giftjobs needs version ${knownMigrations().length}: run giftjobs db migrate; this command reads Redis only and goes on (imports, workers and the webhook receiver refuse until it is fixed)\n`,
    });
    // Nothing of the refused import reached Redis.
    expect(await e.redis.exists(e.ledger.keys("autumn").meta)).toBe(0);
  });
});

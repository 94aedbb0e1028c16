// The audit trail's two stores (docs/architecture/audit.md, "Where it is kept"): appends at the
// same moment never fork the chain; PostgreSQL refuses UPDATE, DELETE and TRUNCATE, and a row
// changed all the same (the trigger disabled, as a superuser could) is named by `audit verify`.
import { afterEach, describe, expect, it } from "vitest";
import type { Actor } from "../../src/audit/actor.js";
import { audited } from "../../src/audit/audited.js";
import { FileAuditTrail } from "../../src/audit/file-trail.js";
import { PgAuditTrail } from "../../src/audit/pg-trail.js";
import type { AuditTrail } from "../../src/audit/trail.js";
import { runCli } from "../helpers/cli.js";
import { useTestDatabase } from "../helpers/database.js";
import { removeDir, tmpDir } from "../helpers/tmp-dir.js";

const actor = (name: string): Actor => ({ name, source: "env", where: "test pid 1" });

/** `n` appends at once, each a pause by another actor. */
const appendMany = (trail: AuditTrail, n: number) =>
  Promise.all(
    Array.from({ length: n }, (_, i) =>
      trail.append({
        actor: actor(`user${i}`),
        action: "pause",
        campaign: `c${i % 3}`,
        details: { money: { USD: { price: "10.00" } } },
        result: "ok",
      }),
    ),
  );

let dir: string | undefined;
afterEach(async () => {
  if (dir) await removeDir(dir);
  dir = undefined;
});

describe("the file trail", () => {
  it("numbers appends made at once 1..n, one chain", async () => {
    dir = await tmpDir("audit-file");
    const trail = new FileAuditTrail(dir);
    const made = await appendMany(trail, 20);
    expect(made.map((e) => e.seq).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
    expect(await trail.verify()).toMatchObject({ ok: true, entries: 20 });
    expect((await trail.list({ campaign: "c1" })).map((e) => e.campaign)).toEqual(
      Array(7).fill("c1"),
    );
    expect(await trail.list({ actor: "user3" })).toHaveLength(1);
    expect(await trail.list({ since: new Date(Date.now() + 60_000) })).toEqual([]);
  });
});

describe("an entry before its effect (audited)", () => {
  it("the entry written first is the only one, unless the step amends it: a second, refused", async () => {
    dir = await tmpDir("audit-first");
    const trail = new FileAuditTrail(dir);
    const done = await audited(trail, actor("ann"), {
      action: "retry",
      campaign: "r",
      run: async (first) => {
        await first({ orders: 2 });
        return 2;
      },
      done: (orders) => ({ orders }),
    });
    expect(done).toBe(2);
    await audited(trail, actor("ann"), {
      action: "retry",
      campaign: "r",
      run: async (first) => {
        const amend = await first({ orders: 2 });
        await amend("1 of the 2 orders planned were not re-queued", { orders: 1 });
        return 1;
      },
    });
    const entries = await trail.list({ campaign: "r" });
    expect(entries.map((e) => [e.result, e.details.orders, e.reason])).toEqual([
      ["ok", 2, null],
      ["ok", 2, null],
      ["refused", 1, "1 of the 2 orders planned were not re-queued"],
    ]);
  });
});

describe("the PostgreSQL trail", () => {
  const db = useTestDatabase("audit");

  it("chains appends made at once; refuses changes; verify names a row changed behind the trigger", async () => {
    const trail = new PgAuditTrail(db.database);
    await appendMany(trail, 12);
    expect(await trail.verify()).toMatchObject({ ok: true, entries: 12 });

    for (const statement of [
      "UPDATE audit_entries SET actor = 'mallory' WHERE seq = 4",
      "DELETE FROM audit_entries WHERE seq = 12",
      "TRUNCATE audit_entries",
    ])
      await expect(db.pool.query(statement)).rejects.toThrow(/audit_entries is append-only/);

    dir = await tmpDir("audit-pg");
    const env = { ...db.env, GIFTJOBS_DATA_DIR: dir };
    const whole = await runCli(["audit", "verify"], env);
    expect(whole.code).toBe(0);
    expect(whole.stdout).toMatch(
      /^audit trail whole: 12 entries, the last \(12\) at \S+, in PostgreSQL table audit_entries\n$/,
    );

    // A superuser can disable the trigger: the change is still found.
    await db.pool.query("ALTER TABLE audit_entries DISABLE TRIGGER audit_entries_append_only");
    await db.pool.query(
      "UPDATE audit_entries SET entry = replace(entry, '\"user4\"', '\"mallory\"'), actor = 'mallory' WHERE actor = 'user4'",
    );
    const seq = (await db.pool.query("SELECT seq FROM audit_entries WHERE actor = 'mallory'"))
      .rows[0].seq;
    const changed = await runCli(["audit", "verify"], env);
    expect({ code: changed.code, stderr: changed.stderr }).toEqual({
      code: 1,
      stderr: `giftjobs: audit trail broken (PostgreSQL table audit_entries): entry ${seq} (row ${seq}) changed: its content does not match its hash\n`,
    });
    await db.pool.query("DELETE FROM audit_entries WHERE actor = 'mallory'");
    const removed = await runCli(["audit", "verify"], env);
    expect(removed.code).toBe(1);
    expect(removed.stderr).toContain(`entry ${seq} removed or moved`);
  });
});

// The audit trail and four eyes from the command line (docs/architecture/audit.md): an import
// over GIFTJOBS_APPROVAL_THRESHOLD is held; its importer's approval is refused, another actor's
// goes through; `audit --campaign` shows them all; a line of the file edited or removed makes
// `audit verify` exit 1 naming it.
import { readFile, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { auditFilePath } from "../../src/audit/file-trail.js";
import { type CampaignEnv, giftjobs } from "../helpers/campaign-env.js";
import { csvFile, validCsv } from "../helpers/csv.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { usersFileWith } from "../helpers/users-file.js";

const { setup } = useCampaignEnv();

/** Imports 3 rows as alice under a threshold they pass; returns the campaign's name. */
async function heldImport(e: CampaignEnv, threshold: (currency: string) => string) {
  const { text, currency } = validCsv(e.index, 3, "fe");
  const file = await csvFile(e, "big.csv", text);
  const run = await giftjobs(
    e,
    ["--as", "alice", "orders", "import", file, "--campaign", "big", "--yes", "--json"],
    { GIFTJOBS_APPROVAL_THRESHOLD: threshold(currency) },
  );
  return { run, currency };
}

describe("four eyes above GIFTJOBS_APPROVAL_THRESHOLD", () => {
  it("holds the import; refuses its importer's approval, takes another's; the audit shows them", async () => {
    const e = await setup("four-eyes");
    const { run, currency } = await heldImport(e, (c) => `${c}:0.01`);
    expect(run.code).toBe(0);
    const imported = JSON.parse(run.stdout);
    expect(imported).toMatchObject({ enqueued: 3, state: "held" });
    expect(imported.four_eyes).toMatch(new RegExp(`^${currency} [\\d.]+ over 0\\.01$`));
    expect(run.stderr).toContain("campaign big is held: its price");
    expect((await e.ledger.campaigns.meta("big")).state).toBe("held");

    const own = await giftjobs(e, ["--as", "alice", "orders", "approve", "--campaign", "big"]);
    expect(own.code).toBe(2);
    expect(own.stderr).toMatch(
      /^giftjobs: error: campaign big is held by the four-eyes rule \(GIFTJOBS_APPROVAL_THRESHOLD: its price .+\): alice imported it, so someone else must approve it \(four eyes\)\n$/,
    );
    expect((await e.ledger.campaigns.meta("big")).state).toBe("held");

    // Above the threshold the approver proves who they are: a token of the users file.
    const users = await usersFileWith(e.dataDir, { bob: "approve" });
    const other = await giftjobs(e, ["orders", "approve", "--campaign", "big"], {
      GIFTJOBS_USERS_FILE: users.path,
      GIFTJOBS_USER_TOKEN: users.tokens.bob!,
    });
    expect(other.code).toBe(0);
    expect(other.stdout).toMatch(/^campaign big approved/);
    expect((await e.ledger.campaigns.meta("big")).state).toBe("running");

    const listed = await giftjobs(e, ["audit", "--campaign", "big", "--json"]);
    expect(listed.code).toBe(0);
    const entries = JSON.parse(listed.stdout);
    expect(
      entries.map((x: { action: string; actor: string; result: string }) => [
        x.action,
        x.actor,
        x.result,
      ]),
    ).toEqual([
      ["import", "alice", "ok"],
      ["approve", "alice", "refused"],
      ["approve", "bob", "ok"],
    ]);
    for (const entry of entries) {
      expect(entry.where).toMatch(/ pid \d+$/);
      expect(Date.parse(entry.at)).toBeGreaterThan(Date.now() - 120_000);
    }
    // `--as` reaches the process as GIFTJOBS_ACTOR (src/cli/main.ts): a name given, not the OS's.
    expect(entries[0]).toMatchObject({ source: "env", campaign: "big" });
    expect(entries[0].details).toMatchObject({ file: "big.csv", new_rows: 3, state: "held" });
    expect(entries[0].details.file_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(entries[0].details.money[currency].price).toMatch(/^\d+(\.\d+)?$/);
    expect(entries[1].reason).toContain("alice imported it");
    expect(entries[2].source).toBe("token");
    expect(listed.stdout).not.toContain(users.tokens.bob!);
    // Counts and money only: no row's e-mail address.
    expect(listed.stdout).not.toMatch(/@[a-z0-9.]*example\.com/);

    const text = await giftjobs(e, ["audit", "--campaign", "big", "--actor", "bob"]);
    expect(text.stdout).toMatch(/^3 {2}\S+Z {2}bob \(token, \S+ pid \d+\) {2}approve big {2}ok/);
    expect(text.stdout.split("\n").filter(Boolean)).toHaveLength(1);

    const whole = await giftjobs(e, ["audit", "verify"]);
    expect(whole.code).toBe(0);
    expect(whole.stdout).toMatch(/^audit trail whole: 3 entries, the last \(3\) at \S+, in /);
  });

  it("holds the import that takes its importer's day over the threshold, across campaigns", async () => {
    const e = await setup("four-eyes-day");
    const files = await Promise.all(
      ["one", "two", "three", "four", "five", "six"].map(async (name) => {
        const { text, currency } = validCsv(e.index, 3, `day-${name}`);
        return { file: await csvFile(e, `${name}.csv`, text), currency };
      }),
    );
    const currency = files[0]!.currency;
    const json = (run: { stdout: string }) => JSON.parse(run.stdout);
    const dry = await giftjobs(e, [
      "orders",
      "import",
      files[0]!.file,
      "--campaign",
      "one",
      "--dry-run",
      "--json",
    ]);
    const price: string = json(dry).totals[currency].price;
    // Each campaign alone is at the threshold, none over it.
    const env = { GIFTJOBS_APPROVAL_THRESHOLD: `${currency}:${price}` };
    const importAs = (who: string, at: number, campaign: string, ...more: string[]) =>
      giftjobs(
        e,
        [
          "--as",
          who,
          "orders",
          "import",
          files[at]!.file,
          "--campaign",
          campaign,
          "--yes",
          "--json",
          ...more,
        ],
        env,
      );

    // The morning's import, before the threshold was set, counts all the same.
    const one = await giftjobs(e, [
      ...[
        "--as",
        "alice",
        "orders",
        "import",
        files[0]!.file,
        "--campaign",
        "one",
        "--yes",
        "--json",
      ],
    ]);
    expect(json(one)).toMatchObject({ state: "running" });
    expect(json(one).four_eyes).toBeUndefined();
    // Bob's day is his own; a dry run counts nothing.
    expect(json(await importAs("bob", 1, "two", "--dry-run"))).toMatchObject({ state: "running" });
    const predicted = json(await importAs("alice", 1, "two", "--dry-run"));
    expect(predicted).toMatchObject({ state: "held" });

    const two = await importAs("alice", 1, "two");
    expect(two.code).toBe(0);
    const rule: string = json(two).four_eyes;
    expect(rule).toMatch(
      new RegExp(
        `^alice's imports of (\\d{4}-\\d{2}-\\d{2}): ${currency} [\\d.]+ over ${price.replace(".", "\\.")}$`,
      ),
    );
    expect(predicted.four_eyes).toBe(rule);
    expect(json(two).state).toBe("held");
    expect(two.stderr).toContain("campaign two is held: alice's imports of ");
    const own = await giftjobs(e, ["--as", "alice", "orders", "approve", "--campaign", "two"]);
    expect(own.code).toBe(2);
    expect(own.stderr).toContain(`(GIFTJOBS_APPROVAL_THRESHOLD: ${rule}): alice imported it`);

    // The same person by another spelling of the name.
    expect(json(await importAs("ALICE ", 2, "three"))).toMatchObject({ state: "held" });

    // An import refused after the count (its budget) leaves the day as it was.
    const day = rule.slice("alice's imports of ".length, "alice's imports of ".length + 10);
    const before = await e.ledger.importedToday.read(day, "alice", currency);
    const refused = await importAs("alice", 3, "four", "--budget", `0.01:${currency}`);
    expect(refused.code).toBe(2);
    expect(await e.ledger.importedToday.read(day, "alice", currency)).toBe(before);

    // Two imports at once by one person: each counts the other's rows.
    const [five, six] = await Promise.all([
      importAs("carol", 4, "five"),
      importAs("carol", 5, "six"),
    ]);
    expect([json(five).state, json(six).state].sort()).toEqual(["held", "running"]);
  });

  it("a campaign under the threshold runs as before", async () => {
    const e = await setup("under");
    const { run } = await heldImport(e, (c) => `${c}:1000000`);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ state: "running" });
    expect(JSON.parse(run.stdout).four_eyes).toBeUndefined();
  });

  it("a bad threshold is one line naming the setting, exit 2", async () => {
    const e = await setup("bad-threshold");
    const run = await giftjobs(e, ["orders", "list"], { GIFTJOBS_APPROVAL_THRESHOLD: "USD=1000" });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^giftjobs: error: GIFTJOBS_APPROVAL_THRESHOLD: must be CUR:AMOUNT/);
    expect(run.stderr.split("\n").filter(Boolean)).toHaveLength(1);
  });
});

describe("audit verify on the data dir's file", () => {
  async function threeEntries(e: CampaignEnv): Promise<string[]> {
    await heldImport(e, (c) => `${c}:0.01`);
    await giftjobs(e, ["--as", "alice", "orders", "approve", "--campaign", "big"]);
    await giftjobs(e, ["--as", "bob", "orders", "approve", "--campaign", "big"]);
    return (await readFile(auditFilePath(e.dataDir), "utf8")).trimEnd().split("\n");
  }
  const write = (e: CampaignEnv, lines: string[]) =>
    writeFile(auditFilePath(e.dataDir), `${lines.join("\n")}\n`);

  it("names an entry edited, removed or moved, exit 1", async () => {
    const e = await setup("verify-file");
    const lines = await threeEntries(e);
    expect(lines).toHaveLength(3);

    await write(e, [lines[0]!, lines[1]!.replace('"actor":"alice"', '"actor":"carol"'), lines[2]!]);
    let run = await giftjobs(e, ["audit", "verify"]);
    expect({ code: run.code, stderr: run.stderr }).toEqual({
      code: 1,
      stderr: `giftjobs: audit trail broken (${auditFilePath(e.dataDir)}): entry 2 (line 2) changed: its content does not match its hash\n`,
    });

    await write(e, [lines[0]!, lines[2]!]);
    run = await giftjobs(e, ["audit", "verify"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("entry 2 removed or moved: line 2 holds entry 3");

    await write(e, [lines[1]!, lines[0]!, lines[2]!]);
    run = await giftjobs(e, ["audit", "verify", "--json"]);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({
      ok: false,
      problem: expect.stringContaining("entry 1 removed or moved: line 1 holds entry 2"),
    });

    await write(e, [lines[0]!, lines[1]!]);
    run = await giftjobs(e, ["audit", "verify"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("entry 3 removed: the trail ends at entry 2, its head says 3");

    await write(e, lines);
    expect((await giftjobs(e, ["audit", "verify"])).code).toBe(0);
  });
});

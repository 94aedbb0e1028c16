// Bypass tests of the four-eyes rule (docs/architecture/audit.md, "Who acted" and "Four
// eyes"): a name in another case, width or with spaces is the same person; above the threshold
// a typed name approves nothing, a token of the users file does, when it is not the importer's
// and has the approve role; the token is in no output and no entry.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { actorKey, sameActor } from "../../src/audit/actor.js";
import { auditFilePath } from "../../src/audit/file-trail.js";
import { checkFourEyes } from "../../src/campaigns/four-eyes.js";
import type { CampaignMeta } from "../../src/ledger/types.js";
import { type CampaignEnv, giftjobs, redisKeys } from "../helpers/campaign-env.js";
import { csvFile, validCsv } from "../helpers/csv.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { usersFileWith } from "../helpers/users-file.js";

const { setup } = useCampaignEnv();

describe("actorKey", () => {
  it("is the same for a name in another case, width or spacing", () => {
    expect(actorKey("  Alice ")).toBe("alice");
    expect(sameActor("alice", "ALICE")).toBe(true);
    expect(sameActor("alice", "\uff21lice")).toBe(true); // a full-width A
    expect(sameActor("Ana  Lima", "ana lima")).toBe(true);
    expect(sameActor("STRASSE", "straße")).toBe(true);
    expect(sameActor("ΟΔΟΣ", "οδοσ")).toBe(true);
    expect(sameActor("alice", "alicia")).toBe(false);
  });

  it("refuses a dashboard user whose name is the importer's in another case", () => {
    const meta = {
      four_eyes: "USD 561.60 over 500.00",
      imported_by: JSON.stringify(["alice"]),
    } as unknown as CampaignMeta;
    const user = { name: "Alice", source: "dashboard", where: "dashboard ::1" } as const;
    expect(() => checkFourEyes("big", meta, { ...user, roles: new Set(["approve"]) })).toThrow(
      "Alice imported it",
    );
    const dashboard = { ...user, name: "Dashboard", roles: new Set(["approve"]) };
    expect(() => checkFourEyes("big", meta, dashboard)).toThrow("names no person");
  });
});

async function heldImport(e: CampaignEnv, extra: Record<string, string>, as: string[] = []) {
  const { text, currency } = validCsv(e.index, 3, "fe");
  const file = await csvFile(e, "big.csv", text);
  const args = [...as, "orders", "import", file, "--campaign", "big", "--yes", "--json"];
  const run = await giftjobs(e, args, {
    GIFTJOBS_APPROVAL_THRESHOLD: `${currency}:0.01`,
    ...extra,
  });
  expect(run.code).toBe(0);
  expect(JSON.parse(run.stdout)).toMatchObject({ state: "held" });
}

const approve = (e: CampaignEnv, env: Record<string, string>, as: string[] = []) =>
  giftjobs(e, [...as, "orders", "approve", "--campaign", "big"], env);

describe("approving above GIFTJOBS_APPROVAL_THRESHOLD", () => {
  it("a typed name approves nothing; a token does, unless it is the importer's or lacks the role", async () => {
    const e = await setup("identity");
    const users = await usersFileWith(e.dataDir, {
      Alice: "approve",
      Bob: "operate,approve",
      Vera: "view",
    });
    const file = { GIFTJOBS_USERS_FILE: users.path };
    const token = (name: string) => ({ ...file, GIFTJOBS_USER_TOKEN: users.tokens[name]! });
    await heldImport(e, {}, ["--as", "alice"]);

    const refusals: [Record<string, string>, string[], string][] = [
      [{}, ["--as", "Alice"], "Alice imported it"],
      [{}, ["--as", "  ALICE "], "ALICE imported it"],
      [{}, ["--as", "\uff21lice"], "imported it"],
      [{}, ["--as", "bob"], "a typed name (--as, GIFTJOBS_ACTOR) proves nobody"],
      [{ GIFTJOBS_ACTOR: "carol" }, [], "proves nobody"],
      [token("Alice"), [], "Alice imported it"],
      [token("Vera"), [], "Vera may not approve: that needs the approve role"],
      [{ ...token("Bob") }, ["--as", "carol"], "give one of them"],
      [{ ...file, GIFTJOBS_USER_TOKEN: "gjd.000000000000.x" }, [], "the token is no user's of"],
      [{ GIFTJOBS_USER_TOKEN: users.tokens.Bob! }, [], "needs GIFTJOBS_USERS_FILE"],
    ];
    for (const [env, as, reason] of refusals) {
      const run = await approve(e, env, as);
      expect({ code: run.code, as, reason }).toMatchObject({ code: 2 });
      expect(run.stderr).toContain(reason);
      expect(run.stderr.split("\n").filter(Boolean)).toHaveLength(1);
      for (const t of Object.values(users.tokens)) expect(run.stderr).not.toContain(t);
    }
    expect((await e.ledger.campaigns.meta("big")).state).toBe("held");

    const tokenFile = join(e.dataDir, "bob.token");
    await writeFile(tokenFile, `${users.tokens.Bob}\n`, { mode: 0o600 });
    const run = await approve(e, file, ["--token-file", tokenFile]);
    expect(run.code).toBe(0);
    const meta = await e.ledger.campaigns.meta("big");
    expect(meta.state).toBe("running");
    expect((meta as unknown as Record<string, string>).approved_by).toBe("Bob");

    const trail = await readFile(auditFilePath(e.dataDir), "utf8");
    const entries = trail
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(entries.at(-1)).toMatchObject({ action: "approve", actor: "Bob", source: "token" });
    expect(entries.at(-1).where).toMatch(/ pid \d+$/);
    // Refused approvals are entries too; none holds a token.
    expect(entries.filter((x) => x.result === "refused").length).toBeGreaterThanOrEqual(5);
    const stored = await Promise.all(
      (await redisKeys(e)).map(async (k) => (await e.redis.dumpBuffer(k))?.toString("latin1")),
    );
    for (const t of Object.values(users.tokens)) {
      expect(trail).not.toContain(t);
      expect(stored.join("")).not.toContain(t.slice(17)); // its secret part
    }
  });

  it("an import with a token records its importer by the token's user", async () => {
    const e = await setup("identity-import");
    const users = await usersFileWith(e.dataDir, { Bob: "approve", Alice: "approve" });
    const file = { GIFTJOBS_USERS_FILE: users.path };
    await heldImport(e, { ...file, GIFTJOBS_USER_TOKEN: users.tokens.Bob! });
    const trail = await readFile(auditFilePath(e.dataDir), "utf8");
    expect(JSON.parse(trail.split("\n")[0]!)).toMatchObject({
      action: "import",
      actor: "Bob",
      source: "token",
    });

    const own = await approve(e, { ...file, GIFTJOBS_USER_TOKEN: users.tokens.Bob! });
    expect(own.code).toBe(2);
    expect(own.stderr).toContain("Bob imported it");
    const other = await approve(e, { ...file, GIFTJOBS_USER_TOKEN: users.tokens.Alice! });
    expect(other.code).toBe(0);
  });
});

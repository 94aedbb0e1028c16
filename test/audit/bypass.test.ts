// The audit trail leaned on (docs/architecture/audit.md; issue 42): every audited command run
// with its stdout or stderr closed by the reader (a pipe's reading end shut before the first
// print, or after the first line as `| head -1`) does its work, writes its entry and exits as
// it would have, with no stack trace; an import refused before or after reading its file leaves
// an entry; a tampered line read by `giftjobs audit` is named, exit 1; a campaign recorded with
// no import entry fails `audit verify`. The same on PostgreSQL as the trail's place.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, rename, rmdir, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { currentActor } from "../../src/audit/actor.js";
import { audited, firstThenAmend, planFirst } from "../../src/audit/audited.js";
import { auditFilePath, FileAuditTrail } from "../../src/audit/file-trail.js";
import {
  type ReconcileReport,
  reconcileCampaign,
  reconcileShortfall,
} from "../../src/campaigns/reconcile.js";
import { retryCampaign } from "../../src/campaigns/retry.js";
import { campaignStatus } from "../../src/campaigns/status.js";
import { auditTable } from "../../src/dashboard/audit-table.js";
import { startDashboard } from "../../src/dashboard/start-dashboard.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import {
  type CampaignEnv,
  cliEnvOf,
  depsOf,
  FAST_TIMINGS,
  giftjobs,
} from "../helpers/campaign-env.js";
import { cliCommandLine } from "../helpers/cli.js";
import { csvFile, validCsv } from "../helpers/csv.js";
import { useTestDatabase } from "../helpers/database.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { eventually } from "../helpers/wait-for.js";

const { setup } = useCampaignEnv({ apiKey: "test-key-123456" });

/** Which of the child's outputs its reader shuts, and when. */
type Shut = "stdout" | "stderr" | "both" | "stdout after a line";

interface ShutRun {
  code: number | null;
  /** What the child printed on the output left open. */
  printed: string;
}

/**
 * Runs `giftjobs ARGS` with a reader that goes away: the pipe's reading end destroyed at once
 * (every print meets a broken pipe), or after the first line (`| head -1`).
 */
function runShut(
  e: CampaignEnv,
  args: string[],
  shut: Shut,
  extraEnv: Record<string, string> = {},
): Promise<ShutRun> {
  const [node, ...entry] = cliCommandLine();
  const child = spawn(node!, [...entry, ...args], {
    env: { ...process.env, ...cliEnvOf(e), GIFTJOBS_LOG_LEVEL: "warn", CI: "true", ...extraEnv },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let printed = "";
  const keep = (text: Buffer) => {
    printed += text;
  };
  if (shut === "stdout" || shut === "both") child.stdout.destroy();
  else if (shut === "stdout after a line")
    child.stdout.on("data", (d: Buffer) => {
      if (d.includes(0x0a)) child.stdout.destroy();
    });
  else child.stdout.on("data", keep);
  if (shut === "stderr" || shut === "both") child.stderr.destroy();
  else child.stderr.on("data", keep);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, printed }));
  });
}

interface Listed {
  seq: number;
  action: string;
  campaign: string | null;
  result: string;
  reason: string | null;
  details: Record<string, unknown>;
}

async function entriesOf(
  e: CampaignEnv,
  campaign: string,
  env: Record<string, string> = {},
): Promise<Listed[]> {
  const run = await giftjobs(e, ["audit", "--campaign", campaign, "--json"], env);
  expect(run.stderr).toBe("");
  return JSON.parse(run.stdout) as Listed[];
}

const steps = (entries: Listed[]) => entries.map((x) => `${x.action} ${x.result}`);

/** The data dir's trail made unwritable: a folder where its file was (kept aside, if any). */
async function breakTrail(e: CampaignEnv): Promise<void> {
  const path = auditFilePath(e.dataDir);
  await rename(path, `${path}.aside`).catch(() => undefined);
  await mkdir(path);
}

/** The trail back as breakTrail found it. */
async function mendTrail(e: CampaignEnv): Promise<void> {
  const path = auditFilePath(e.dataDir);
  await rmdir(path);
  await rename(`${path}.aside`, path).catch(() => undefined);
}

/** A dashboard action on a campaign, confirmed, with the csrf token its page carries. */
async function dashboardAction(dashboardUrl: string, campaign: string, action: string) {
  const page = await (await fetch(new URL(`campaigns/${campaign}`, dashboardUrl))).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;
  return fetch(new URL(`campaigns/${campaign}/actions/${action}`, dashboardUrl), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: `csrf=${encodeURIComponent(csrf)}&confirmed=yes`,
  });
}

/**
 * Two rows of `campaign`, each order made by the service then answered 500 (the env's sandbox
 * has failAfterRate 1): failed_uncertain, made. The workers stopped after.
 */
async function uncertainCampaign(
  envs: ReturnType<typeof useCampaignEnv>,
  e: CampaignEnv,
  campaign: string,
): Promise<void> {
  const file = await csvFile(e, `${campaign}.csv`, validCsv(e.index, 2, campaign).text);
  await importCampaign(
    {
      file,
      campaign,
      executionMode: "sync",
      jobOptions: { attempts: 1, backoff: { type: "fixed", delay: 10 } },
    },
    depsOf(e),
  );
  await envs.work(e, { concurrency: 1, timings: FAST_TIMINGS });
  await eventually(
    async () => (await campaignStatus(e.ledger, campaign)).failed_uncertain === 2,
    "failed_uncertain",
  );
  await envs.stopWorkers();
}

/** Every audited step of a campaign's life, each run with its outputs shut as `shut` says. */
async function lifeWithShutOutput(e: CampaignEnv, shut: Shut, env: Record<string, string> = {}) {
  const campaign = `life-${shut.replace(/\W+/g, "-")}`;
  const file = await csvFile(e, `${campaign}.csv`, validCsv(e.index, 3, campaign).text);
  const codes: Record<string, number | null> = {};
  const run = async (name: string, args: string[]) => {
    const done = await runShut(e, args, shut, env);
    codes[name] = done.code;
    // Nothing of a crash on what was left open: no stack trace, no EPIPE.
    expect(done.printed).not.toMatch(/EPIPE|\n\s+at /);
  };
  await run("import", ["orders", "import", file, "--campaign", campaign, "--hold", "--yes"]);
  expect((await e.ledger.campaigns.meta(campaign)).state).toBe("held");
  await run("approve", ["orders", "approve", "--campaign", campaign]);
  await run("pause", ["orders", "pause", "--campaign", campaign]);
  await run("resume", ["orders", "resume", "--campaign", campaign]);
  await run("retry", ["orders", "retry", "--campaign", campaign]);
  await run("reconcile", ["orders", "reconcile", "--campaign", campaign, "--min-age", "0"]);
  await run("cancel", ["orders", "cancel", "--campaign", campaign]);
  await run("archive", ["orders", "archive", "--campaign", campaign]);
  await run("restore", ["orders", "restore", "--campaign", campaign]);
  // Each exits as it would with its outputs open.
  expect(Object.entries(codes).filter(([, code]) => code !== 0)).toEqual([]);
  const entries = await entriesOf(e, campaign, env);
  expect(steps(entries)).toEqual([
    "import ok",
    "approve ok",
    "pause ok",
    "resume ok",
    "retry ok",
    "reconcile ok",
    "cancel ok",
    "archive ok",
    "restore ok",
  ]);
  expect(entries[0]!.details).toMatchObject({ new_rows: 3, state: "held" });
  expect((await e.ledger.campaigns.meta(campaign)).state).toBe("cancelled");
}

describe("output that cannot be written, on the data dir's trail", () => {
  for (const shut of ["stdout", "stderr", "both", "stdout after a line"] as const)
    it(`every audited command with ${shut} shut by its reader does its work and writes its entry`, async () => {
      const e = await setup(`shut-${shut.replace(/\W+/g, "-")}`);
      await lifeWithShutOutput(e, shut);
      const verify = await giftjobs(e, ["audit", "verify"]);
      expect(verify.code).toBe(0);
    });

  it("`orders import --yes | head -1` in a shell: the campaign recorded, its entry written, the rows sendable", async () => {
    const e = await setup("head-1");
    const file = await csvFile(e, "mkt.csv", validCsv(e.index, 4, "mkt").text);
    const line = [...cliCommandLine(), "orders", "import", file, "--campaign", "mkt", "--yes"]
      .map((word) => `'${word}'`)
      .join(" ");
    const child = spawn(
      "bash",
      ["-c", `${line} | head -1; echo "giftjobs exit \${PIPESTATUS[0]}" >&2`],
      {
        env: { ...process.env, ...cliEnvOf(e), GIFTJOBS_LOG_LEVEL: "warn", CI: "true" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    await new Promise((resolve) => child.on("close", resolve));
    expect(out).toBe("campaign mkt\n");
    expect(err).toBe("giftjobs exit 0\n");
    expect(steps(await entriesOf(e, "mkt"))).toEqual(["import ok"]);
    expect((await e.ledger.campaigns.meta("mkt")).state).toBe("running");
  });
});

describe("an entry before its effect", () => {
  it("an import whose entry cannot be written records nothing", async () => {
    const e = await setup("no-entry");
    // The trail's file made a directory: no append can succeed, whoever runs it.
    await mkdir(auditFilePath(e.dataDir));
    const file = await csvFile(e, "x.csv", validCsv(e.index, 2, "x").text);
    const run = await giftjobs(e, ["orders", "import", file, "--campaign", "x", "--yes"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^giftjobs: failed: .*audit\.ndjson/m);
    expect(await e.ledger.campaigns.exists("x")).toBe(false);
    expect(await e.redis.keys(`${e.config.prefix}:*x*`)).toEqual([]);
  });

  it("an approval or a resume whose entry cannot be written does not let the campaign run", async () => {
    const e = await setup("no-entry-approve");
    const file = await csvFile(e, "h.csv", validCsv(e.index, 2, "h").text);
    await giftjobs(e, ["orders", "import", file, "--campaign", "h", "--hold", "--yes"]);
    const path = auditFilePath(e.dataDir);
    await rename(path, `${path}.aside`);
    await mkdir(path);
    const approve = await giftjobs(e, ["orders", "approve", "--campaign", "h"]);
    expect(approve.code).toBe(1);
    expect((await e.ledger.campaigns.meta("h")).state).toBe("held");

    await rmdir(path);
    await rename(`${path}.aside`, path);
    expect((await giftjobs(e, ["orders", "approve", "--campaign", "h"])).code).toBe(0);
    expect((await giftjobs(e, ["orders", "pause", "--campaign", "h"])).code).toBe(0);
    await rename(path, `${path}.aside`);
    await mkdir(path);
    const resume = await giftjobs(e, ["orders", "resume", "--campaign", "h"]);
    expect(resume.code).toBe(1);
    expect((await e.ledger.campaigns.meta("h")).state).toBe("paused");

    await rmdir(path);
    await rename(`${path}.aside`, path);
    const entries = await entriesOf(e, "h");
    expect(steps(entries)).toEqual(["import ok", "approve ok", "pause ok"]);
    // Written before the move: the state it moves to, the campaign's rows and money.
    expect(entries[1]!.details).toMatchObject({
      outcome: "campaign h approved",
      state: "running",
      rows: 2,
    });
    expect((await giftjobs(e, ["audit", "verify"])).code).toBe(0);
  });

  it("the dashboard's Approve whose entry cannot be written leaves the campaign held", async () => {
    const e = await setup("no-entry-dashboard");
    const file = await csvFile(e, "d.csv", validCsv(e.index, 2, "d").text);
    await giftjobs(e, ["orders", "import", file, "--campaign", "d", "--hold", "--yes"]);
    const dashboard = await startDashboard({ config: e.config, port: 0, allowActions: true });
    try {
      const approve = () => dashboardAction(dashboard.url, "d", "approve");
      // The import's entry is there: the trail's file is moved aside, and back.
      expect(existsSync(auditFilePath(e.dataDir))).toBe(true);
      await breakTrail(e);
      await (await approve()).text();
      expect((await e.ledger.campaigns.meta("d")).state).toBe("held");
      await mendTrail(e);
      expect(await (await approve()).text()).toContain("campaign d approved");
      expect((await e.ledger.campaigns.meta("d")).state).toBe("running");
    } finally {
      await dashboard.close();
    }
    const entries = await entriesOf(e, "d");
    expect(steps(entries)).toEqual(["import ok", "approve ok"]);
    expect(entries[1]!.details).toMatchObject({ via: "dashboard", outcome: "campaign d approved" });
  });
});

describe("a retry whose entry cannot be written", () => {
  const envs = useCampaignEnv();

  it("re-queues nothing, on the CLI and on the dashboard", async () => {
    const e = await envs.setup("no-entry-retry", { apiKey: "test-key-123456", failAfterRate: 1 });
    await uncertainCampaign(envs, e, "u");
    e.sandbox.setFaults({ failAfterRate: 0 });
    await breakTrail(e);
    const retry = await giftjobs(e, ["orders", "retry", "--campaign", "u"]);
    expect(retry.code).toBe(1);
    expect((await campaignStatus(e.ledger, "u")).failed_uncertain).toBe(2);

    const dashboard = await startDashboard({ config: e.config, port: 0, allowActions: true });
    try {
      const post = async () => (await dashboardAction(dashboard.url, "u", "retry")).text();
      await post();
      expect((await campaignStatus(e.ledger, "u")).failed_uncertain).toBe(2);
      await mendTrail(e);
      expect(await post()).toContain("2 rows in 2 orders re-queued (same-key)");
      expect((await campaignStatus(e.ledger, "u")).failed_uncertain).toBe(0);
    } finally {
      await dashboard.close();
    }
    const entries = await entriesOf(e, "u");
    expect(steps(entries)).toEqual(["retry ok"]);
    expect(entries[0]!.details).toMatchObject({
      via: "dashboard",
      outcome: "2 rows in 2 orders re-queued (same-key)",
    });
  }, 60_000);
});

describe("a reconcile whose entry cannot be written", () => {
  const envs = useCampaignEnv();

  it("settles nothing; with the trail back it settles, its entry holding the plan", async () => {
    const e = await envs.setup("no-entry-reconcile", {
      apiKey: "test-key-123456",
      failAfterRate: 1,
    });
    await uncertainCampaign(envs, e, "r");
    await breakTrail(e);
    const args = ["orders", "reconcile", "--campaign", "r", "--min-age", "0"];
    const refused = await giftjobs(e, args);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^giftjobs: failed: .*audit\.ndjson/m);
    // The service's orders were read and the plan made, but the ledger is as it was.
    expect(await campaignStatus(e.ledger, "r")).toMatchObject({
      failed_uncertain: 2,
      completed: 0,
    });

    await mendTrail(e);
    const settled = await giftjobs(e, args);
    expect(settled.code, settled.stderr).toBe(0);
    expect(await campaignStatus(e.ledger, "r")).toMatchObject({
      failed_uncertain: 0,
      completed: 2,
    });
    const entries = await entriesOf(e, "r");
    expect(steps(entries)).toEqual(["reconcile ok"]);
    expect(entries[0]!.details).toMatchObject({ agree: true, uncertain_settled: { completed: 2 } });
  }, 60_000);

  it("a settlement the ledger refuses after the entry gets a second entry, refused", async () => {
    const e = await envs.setup("amend-reconcile", { apiKey: "test-key-123456", failAfterRate: 1 });
    await uncertainCampaign(envs, e, "m");
    const trail = new FileAuditTrail(e.dataDir);
    const settled = (r: ReconcileReport) => ({
      uncertain: r.uncertain.map((u) => `${u.ledger_order} ${u.outcome}`),
    });
    const report = await audited(trail, currentActor(), {
      action: "reconcile",
      campaign: "m",
      run: (first) =>
        planFirst(
          firstThenAmend((plan) => first(settled(plan)), reconcileShortfall, settled),
          (beforeSettle) =>
            reconcileCampaign(e.ledger, e.client, "m", {
              apiKey: e.client.keyFingerprint,
              minAgeMs: 0,
              beforeSettle: async (plan) => {
                await beforeSettle(plan);
                // Another operator's same-key retry, between the entry and the settlements.
                await retryCampaign(e.ledger, "m", {});
              },
            }),
        ),
    });
    await trail.close();
    expect(report.uncertain.map((u) => [u.outcome, u.why])).toEqual([
      ["undecided", "it changed during the check"],
      ["undecided", "it changed during the check"],
    ]);
    expect(await campaignStatus(e.ledger, "m")).toMatchObject({ queued: 2, completed: 0 });
    const entries = await entriesOf(e, "m");
    expect(steps(entries)).toEqual(["reconcile ok", "reconcile refused"]);
    expect(entries[0]!.details).toEqual({ uncertain: ["1 completed", "2 completed"] });
    expect(entries[1]!.reason).toBe(
      "2 of 2 planned settlements not made: the orders changed during the check (ledger orders 1, 2)",
    );
    expect(entries[1]!.details).toEqual({ uncertain: ["1 undecided", "2 undecided"] });
  }, 60_000);
});

describe("refused attempts are entries", () => {
  it("an empty file, a wrong API key, a missing file, a campaign that exists, an approval refused", async () => {
    const e = await setup("refused");
    const empty = await csvFile(e, "empty.csv", "");
    const emptyRun = await giftjobs(e, ["orders", "import", empty, "--campaign", "a", "--yes"]);
    expect(emptyRun.code).toBe(2);

    const file = await csvFile(e, "b.csv", validCsv(e.index, 2, "b").text);
    const wrongKey = await giftjobs(e, ["orders", "import", file, "--campaign", "b", "--yes"], {
      GIFTJOBS_API_KEY: "a-wrong-key-456789",
    });
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toContain("GIFTJOBS_API_KEY");
    expect(await e.ledger.campaigns.exists("b")).toBe(false);

    const missing = await giftjobs(e, [
      "orders",
      "import",
      `${file}.gone`,
      "--campaign",
      "c",
      "--yes",
    ]);
    expect(missing.code).toBe(2);

    const first = await giftjobs(e, ["orders", "import", file, "--campaign", "d", "--yes"]);
    expect(first.code).toBe(0);
    const other = await csvFile(e, "d2.csv", validCsv(e.index, 2, "d2").text);
    const again = await giftjobs(e, ["orders", "import", other, "--campaign", "d", "--yes"]);
    expect(again.code).toBe(2);
    const approve = await giftjobs(e, ["orders", "approve", "--campaign", "d"]);
    expect(approve.code).toBe(2);

    const a = await entriesOf(e, "a");
    expect(steps(a)).toEqual(["import refused"]);
    expect(a[0]!.details).toMatchObject({ file: "empty.csv" });
    expect(a[0]!.reason).toBeTruthy();
    const b = await entriesOf(e, "b");
    expect(steps(b)).toEqual(["import failed"]);
    expect(b[0]!.reason).toContain("GIFTJOBS_API_KEY");
    expect(JSON.stringify(b)).not.toContain("a-wrong-key-456789");
    const c = await entriesOf(e, "c");
    expect(steps(c)).toEqual(["import refused"]);
    expect(c[0]!.details).toMatchObject({ file: "b.csv.gone", file_sha256: null });
    expect(steps(await entriesOf(e, "d"))).toEqual([
      "import ok",
      "import refused",
      "approve refused",
    ]);
    // A dry run changes nothing: no entry, refused or not.
    await giftjobs(e, ["orders", "import", empty, "--campaign", "e", "--dry-run"]);
    expect(await entriesOf(e, "e")).toEqual([]);
  });
});

describe("reading is verifying", () => {
  it("`audit` on a tampered line says so first, naming the entry, exit 1; --no-verify lists it", async () => {
    const e = await setup("tampered");
    const file = await csvFile(e, "t.csv", validCsv(e.index, 2, "t").text);
    await giftjobs(e, [
      "--as",
      "alice",
      "orders",
      "import",
      file,
      "--campaign",
      "t",
      "--hold",
      "--yes",
    ]);
    await giftjobs(e, ["--as", "bob", "orders", "approve", "--campaign", "t"]);
    const path = auditFilePath(e.dataDir);
    const lines = (await readFile(path, "utf8")).trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    await writeFile(
      path,
      `${lines[0]!.replace('"actor":"alice"', '"actor":"mallory"')}\n${lines[1]}\n`,
    );

    for (const args of [["audit"], ["audit", "--campaign", "t", "--json"], ["audit", "--csv"]]) {
      const run = await giftjobs(e, args);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe("");
      expect(run.stderr).toMatch(
        /^giftjobs: audit trail broken \(.*audit\.ndjson\): entry 1 \(line 1\) changed: its content does not match its hash; nothing listed/,
      );
      expect(run.stderr).not.toContain("mallory");
    }
    const forensic = await giftjobs(e, ["audit", "--no-verify"]);
    expect(forensic.code).toBe(0);
    expect(forensic.stdout).toMatch(/^1 {2}\S+ {2}mallory \(env, /);
  });

  it("the dashboard's audit table says the trail is broken, and shows no entry", () => {
    const problem = "entry 1 (line 1) changed: its content does not match its hash";
    const html = auditTable("t", { entries: [], problem });
    expect(html).toContain("The audit trail is broken");
    expect(html).toContain("entry 1 (line 1) changed");
    expect(html).not.toContain("<table");
  });
});

describe("audit verify and the campaigns", () => {
  it("names a campaign of the ledger and the journal recorded with no import entry", async () => {
    const e = await setup("unentered");
    const file = await csvFile(e, "ok.csv", validCsv(e.index, 2, "ok").text);
    await giftjobs(e, ["orders", "import", file, "--campaign", "seen", "--yes"]);
    expect((await giftjobs(e, ["audit", "verify"])).code).toBe(0);

    // The library records a campaign with no entry: the bypass verify must find.
    const other = await csvFile(e, "quiet.csv", validCsv(e.index, 2, "quiet").text);
    await importCampaign({ file: other, campaign: "quiet" }, depsOf(e));
    const run = await giftjobs(e, ["audit", "verify"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^giftjobs: audit trail broken \(.*\): campaign quiet of the ledger has no import entry/,
    );

    // The ledger lost (FLUSHALL's like): the journal still names it.
    expect(await e.redis.srem(`${e.config.prefix}:campaigns`, "quiet")).toBe(1);
    const journal = await giftjobs(e, ["audit", "verify", "--json"]);
    expect(journal.code).toBe(1);
    expect(JSON.parse(journal.stdout)).toMatchObject({ ok: false });
    expect(JSON.parse(journal.stdout).problem).toMatch(
      /^campaign quiet of the order journal has no import entry/,
    );
  });
});

describe("on PostgreSQL, the trail's place", () => {
  const db = useTestDatabase("audit-bypass");

  it("every audited command with stdout shut writes its entry; a tampered row is named by `audit`; refusals are entries", async () => {
    const e = await setup("pg-shut");
    const sync = await giftjobs(e, ["catalog", "sync"], db.env);
    expect(sync.code).toBe(0);
    await lifeWithShutOutput(e, "both", db.env);

    const empty = await csvFile(e, "empty.csv", "");
    expect(
      (await giftjobs(e, ["orders", "import", empty, "--campaign", "z", "--yes"], db.env)).code,
    ).toBe(2);
    expect(steps(await entriesOf(e, "z", db.env))).toEqual(["import refused"]);
    expect((await giftjobs(e, ["audit", "verify"], db.env)).code).toBe(0);

    // A row changed behind the trigger, as a superuser could.
    await db.pool.query("ALTER TABLE audit_entries DISABLE TRIGGER USER");
    await db.pool.query(
      'UPDATE audit_entries SET entry = replace(entry, \'"action":"pause"\', \'"action":"resume"\') WHERE seq = 3',
    );
    const run = await giftjobs(e, ["audit"], db.env);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(
      /^giftjobs: audit trail broken \(PostgreSQL table audit_entries\): entry 3 \(row 3\) changed/,
    );
  });
});

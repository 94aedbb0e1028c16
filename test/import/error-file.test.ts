import { chmod, chown, mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { type CampaignEnv, campaignEnv, cliEnvOf, giftjobs } from "../helpers/campaign-env.js";
import { runCli } from "../helpers/cli.js";
import { csvFile, validCsv } from "../helpers/csv.js";
import { projectReadableBy } from "../helpers/readable-project.js";

let env: CampaignEnv | undefined;

afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

const isRoot = process.getuid?.() === 0;
const NOBODY = 65534;

/**
 * As root, the project the CLI runs from as nobody: this checkout, or a copy nobody can read when
 * the checkout is in a folder only its owner may enter. Undefined when nobody cannot run node.
 */
let project: string | undefined;

beforeAll(async () => {
  if (isRoot) project = await projectReadableBy({ uid: NOBODY, gid: NOBODY });
}, 120_000);

/** Root writes anywhere: these tests need a user who cannot, and one who can run the CLI. */
function skipUnlessRunnable(context: TestContext): void {
  if (isRoot && !project)
    context.skip(
      "run as root, and user nobody cannot run node from here (node or the temporary folder is not readable by nobody)",
    );
}

async function setup(): Promise<CampaignEnv> {
  env = await campaignEnv({}, "error-file");
  return env;
}

/** `orders import --skip-invalid --error-file PATH` of a file with one invalid row. */
async function importTo(e: CampaignEnv, errorFile: string, flags: string[] = []) {
  const file = await csvFile(e, "orders.csv", `${validCsv(e.index, 2).text}not-an-email,X,1\n`);
  const args = [
    ...["orders", "import", file, "--campaign", "ef", "--yes", "--skip-invalid"],
    ...["--error-file", errorFile, ...flags],
  ];
  if (!isRoot) return giftjobs(e, args);
  // Root may write anywhere: the run is made as nobody, who owns the data folder, from a
  // project nobody can read.
  await chownTree(e.dataDir, NOBODY);
  return runCli(args, { ...cliEnvOf(e), GIFTJOBS_LOG_LEVEL: "warn" }, project, {
    uid: NOBODY,
    gid: NOBODY,
    root: project,
  });
}

async function chownTree(path: string, id: number): Promise<void> {
  await chown(path, id, id);
  for (const entry of await readdir(path, { withFileTypes: true, recursive: true }))
    await chown(join(entry.parentPath, entry.name), id, id);
}

describe("an --error-file that cannot be written", () => {
  it("is refused in one line naming it and why, before anything is read or recorded", async (context) => {
    skipUnlessRunnable(context);
    const e = await setup();
    const notAFolder = join(e.dataDir, "notes.txt");
    await writeFile(notAFolder, "a file\n");
    const under = join(notAFolder, "fix.csv");
    const run = await importTo(e, under);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr.trim().split("\n")).toEqual([
      `giftjobs: error: cannot write the error file ${under}: a part of its path is a file, not a folder (--error-file names another)`,
    ]);

    const folder = join(e.dataDir, "fixes");
    await mkdir(folder);
    const onFolder = await importTo(e, folder, ["--json"]);
    expect(onFolder.code).toBe(2);
    const line = `cannot write the error file ${folder}: it is a folder (--error-file names another)`;
    expect(onFolder.stderr.trim().split("\n")).toEqual([`giftjobs: error: ${line}`]);
    expect(JSON.parse(onFolder.stdout).errors).toEqual([{ line: null, message: line }]);

    // Nothing half-written: no temporary file beside either, no campaign; the audit trail holds
    // the two refusals (docs/architecture/audit.md, "What is recorded").
    expect((await readdir(e.dataDir)).sort()).toEqual([
      "audit.head",
      "audit.ndjson",
      "catalog",
      "fixes",
      "notes.txt",
      "orders.csv",
    ]);
    expect(await readdir(folder)).toEqual([]);
    expect(await e.ledger.campaigns.exists("ef")).toBe(false);
  });

  it("in a folder it may not write to: permission denied", async (context) => {
    skipUnlessRunnable(context);
    const e = await setup();
    const locked = join(e.dataDir, "locked");
    await mkdir(locked);
    await chmod(locked, 0o500);
    try {
      const run = await importTo(e, join(locked, "fix.csv"));
      expect(run.code).toBe(2);
      expect(run.stderr.trim().split("\n")).toEqual([
        `giftjobs: error: cannot write the error file ${join(locked, "fix.csv")}: permission denied (--error-file names another)`,
      ]);
      expect(await e.ledger.campaigns.exists("ef")).toBe(false);
    } finally {
      await chmod(locked, 0o700);
    }
  });

  it("a writable one still gets the invalid rows", async (context) => {
    skipUnlessRunnable(context);
    const e = await setup();
    const fix = join(e.dataDir, "deep", "er", "fix.csv");
    const run = await importTo(e, fix, ["--json"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ valid: 2, invalid: 1, error_file: fix });
    expect(await readdir(join(e.dataDir, "deep", "er"))).toEqual(["fix.csv"]);
  });
});

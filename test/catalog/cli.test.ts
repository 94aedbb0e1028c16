import { mkdir, readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cursorOfPage, useCatalogFixture } from "../helpers/catalog-fixture.js";
import { type CliRun, runCli } from "../helpers/cli.js";
import { control } from "../helpers/sandbox.js";

const fx = useCatalogFixture({ products: 600, apiKey: "test-key" });

/** Runs `giftjobs ARGS` in a child process against the fixture's sandbox and data dir. */
function giftjobs(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return runCli(args, {
    GIFTJOBS_API_URL: fx.sandbox.url,
    GIFTJOBS_API_KEY: "test-key",
    GIFTJOBS_DATA_DIR: fx.dataDir,
    GIFTJOBS_LOG_LEVEL: "warn",
    ...env,
  });
}

/** A port on 127.0.0.1 that nothing listens on (it was free a moment ago). */
function deadPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe("giftjobs catalog", () => {
  it("says there is no snapshot yet in one line, exit 2", async () => {
    for (const command of [["show"], ["diff"]]) {
      const { code, stderr } = await giftjobs(["catalog", ...command]);
      expect(code).toBe(2);
      expect(stderr.trim()).toBe(
        `giftjobs: error: no catalog snapshot in ${fx.dataDir}/catalog; run \`giftjobs catalog sync\` first`,
      );
    }
  });

  it("syncs with --json, then shows and diffs", async () => {
    const sync = await giftjobs(["catalog", "sync", "--json"]);
    expect(sync.code).toBe(0);
    const doc = JSON.parse(sync.stdout);
    expect(doc).toEqual({
      products: 600,
      pages: 2,
      snapshot: expect.stringContaining(`${fx.dataDir}/catalog/snapshots/`),
      added: 600,
      removed: 0,
      changed: 0,
    });

    const product = fx.sandbox.state.catalog.products[42]!;
    const show = await giftjobs(["catalog", "show", "--code", product.code, "--json"]);
    expect(show.code).toBe(0);
    expect(JSON.parse(show.stdout)).toEqual([product]);

    const table = await giftjobs(["catalog", "show", "--code", product.code]);
    expect(table.stdout.split("\n")[0]).toMatch(/^CODE\s+NAME\s+TYPE\s+CURRENCY\s+ORDERABLE/);
    expect(table.stdout).toContain(product.code);

    const diff = await giftjobs(["catalog", "diff", "--json"]);
    expect(JSON.parse(diff.stdout).summary).toMatchObject({ added: 600 });
  });

  it("shows nothing of a products.json changed since publication: one line, exit 1", async () => {
    const sync = await giftjobs(["catalog", "sync", "--json"]);
    const path = join(JSON.parse(sync.stdout).snapshot, "products.json");
    await writeFile(path, (await readFile(path, "utf8")).slice(0, 5000));
    for (const json of [["--json"], []]) {
      const { code, stdout, stderr } = await giftjobs(["catalog", "show", ...json]);
      expect(code).toBe(1);
      expect(stdout).toBe("");
      expect(stderr.trim()).toBe(
        `giftjobs: failed: ${path}: changed since it was published (sha256 differs from manifest.json)`,
      );
    }
  });

  it("fails with exit 1 and one line when the cursor does not advance", async () => {
    await control(fx.sandbox, "/_sandbox/faults", {
      product_page_fault: { after: cursorOfPage(fx.sandbox, 2), kind: "stuck_cursor" },
    });
    const { code, stdout, stderr } = await giftjobs(["catalog", "sync", "--json"]);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr.trim()).toMatch(
      /^giftjobs: failed: catalog sync failed: page 2: .*cursor did not advance.*; the current snapshot is unchanged$/,
    );
  });

  it("fails with exit 1 and one line while another sync holds the lock", async () => {
    await mkdir(join(fx.dataDir, "catalog"), { recursive: true });
    // Relative to now: the code treats a lock older than 24 h as stale, so a fixed date breaks
    // the day the calendar passes it.
    const startedAt = new Date(Date.now() - 60_000).toISOString();
    const owner = { pid: process.pid, host: hostname(), started_at: startedAt };
    await writeFile(join(fx.dataDir, "catalog", "sync.lock"), JSON.stringify(owner));
    const { code, stdout, stderr } = await giftjobs(["catalog", "sync", "--json"]);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr.trim()).toBe(
      `giftjobs: failed: another catalog sync is running (pid ${process.pid} on ${hostname()}, since ${startedAt}); the current snapshot is unchanged. If none is running, remove ${fx.dataDir}/catalog/sync.lock`,
    );
  });

  it("stops after 3 tries when nothing listens at the URL, naming URL, host and setting", async () => {
    const port = await deadPort();
    const run = await giftjobs(["catalog", "sync"], {
      GIFTJOBS_API_URL: `http://127.0.0.1:${port}`,
      GIFTJOBS_LOG_LEVEL: "error",
    });
    expect(run.code).toBe(1);
    // One line naming the URL, the tries and the setting, and what the sync left as it was. The
    // tries are counted in test/catalog/retry-policy.test.ts: 3 for a refused connection, not the
    // five (and ~24 s of backoff) of a 5xx.
    const line = run.stderr.trim();
    expect(line).toMatch(/^giftjobs: failed: cannot reach the service at /);
    expect(line).toContain(`http://127.0.0.1:${port} (connection refused`);
    expect(line).toContain("after 3 tries");
    expect(line).toContain("GIFTJOBS_API_URL");
    expect(line).toMatch(/The current snapshot is unchanged\.$/);
  });

  it("a wrong API key names GIFTJOBS_API_KEY and never the key", async () => {
    const run = await giftjobs(["catalog", "sync"], { GIFTJOBS_API_KEY: "sk-wrong-secret-42" });
    expect(run.stderr).not.toContain("sk-wrong-secret-42");
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      "giftjobs: failed: catalog sync failed at page 1: the API key is not valid (invalid_api_key, HTTP 401): check GIFTJOBS_API_KEY; the current snapshot is unchanged",
    );
  });

  it("refuses bad flags with exit 2", async () => {
    const { code, stderr } = await giftjobs(["catalog", "sync", "--country", "GBR"]);
    expect(code).toBe(2);
    expect(stderr).toContain("--country");
  });
});

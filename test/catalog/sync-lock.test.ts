import { spawnSync } from "node:child_process";
import { access, mkdir, readFile, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openCurrentSnapshot } from "../../src/catalog/current-snapshot.js";
import { acquireSyncLock } from "../../src/catalog/sync-lock.js";
import { RunError } from "../../src/errors/run-error.js";
import { cursorOfPage, useCatalogFixture } from "../helpers/catalog-fixture.js";
import { control } from "../helpers/sandbox.js";
import { eventually } from "../helpers/wait-for.js";

const fx = useCatalogFixture();

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/** Where the lock lives: the file its refusal tells the operator to remove. */
const lockPath = () => join(fx.dataDir, "catalog", "sync.lock");

/** Writes a lock file as another sync would have. */
async function lockAs(pid: number, host = hostname(), startedAt = new Date()): Promise<void> {
  await mkdir(join(fx.dataDir, "catalog"), { recursive: true });
  await writeFile(
    lockPath(),
    JSON.stringify({ pid, host, started_at: startedAt.toISOString(), token: "theirs" }),
  );
}

/** A pid that no process has any more. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]);
  return Number(child.stdout.toString());
}

describe("the catalog sync lock", () => {
  it("refuses a second sync while one runs, and leaves the first one's lock alone", async () => {
    await control(fx.sandbox, "/_sandbox/faults", { latency_ms: 150 });
    const first = fx.sync();
    // The first sync holds the lock before its first request.
    await eventually(() => exists(lockPath()), "the first sync's lock", 10_000);

    const second = await fx.sync().catch((e: unknown) => e);
    expect(second).toBeInstanceOf(RunError);
    expect((second as Error).message).toMatch(
      new RegExp(
        `^another catalog sync is running \\(pid ${process.pid} on .+, since \\S+\\); the current snapshot is unchanged`,
      ),
    );
    expect(await exists(lockPath())).toBe(true);

    const result = await first;
    expect(result.manifest.product_count).toBe(1200);
    expect((await openCurrentSnapshot(fx.dataDir))?.name).toBe(result.snapshot);
    expect(await exists(lockPath())).toBe(false);
    await control(fx.sandbox, "/_sandbox/faults", { latency_ms: 0 });
    await expect(fx.sync()).resolves.toMatchObject({ manifest: { product_count: 1200 } });
  });

  it("releases the lock when the sync fails", async () => {
    await control(fx.sandbox, "/_sandbox/faults", {
      product_page_fault: { after: cursorOfPage(fx.sandbox, 2), kind: "500" },
    });
    await expect(fx.sync()).rejects.toThrow(RunError);
    expect(await exists(lockPath())).toBe(false);
  });

  it("takes over the lock of a process that is gone", async () => {
    await lockAs(deadPid());
    await expect(fx.sync()).resolves.toMatchObject({ manifest: { product_count: 1200 } });
    expect(await exists(lockPath())).toBe(false);
  });

  it("takes over a day-old lock of a live pid (reused after a reboot)", async () => {
    await lockAs(process.pid, hostname(), new Date(Date.now() - 25 * 3600_000));
    await expect(fx.sync()).resolves.toMatchObject({ manifest: { product_count: 1200 } });
  });

  it("respects another host's lock for a day, then takes it over", async () => {
    await lockAs(1, "elsewhere.example");
    await expect(fx.sync()).rejects.toThrow(
      /another catalog sync is running \(pid 1 on elsewhere\.example/,
    );
    expect(JSON.parse(await readFile(lockPath(), "utf8")).token).toBe("theirs");

    await lockAs(1, "elsewhere.example", new Date(Date.now() - 25 * 3600_000));
    await expect(fx.sync()).resolves.toMatchObject({ manifest: { product_count: 1200 } });
  });

  it("does not release a lock another sync has taken since", async () => {
    const lock = await acquireSyncLock(fx.dataDir);
    await lockAs(process.pid); // as if removed by hand and taken by someone else
    await lock.release();
    expect(JSON.parse(await readFile(lockPath(), "utf8")).token).toBe("theirs");
  });
});

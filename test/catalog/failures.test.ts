import { spawnSync } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openCurrentSnapshot } from "../../src/catalog/current-snapshot.js";
import { ShrinkRefusedError } from "../../src/catalog/shrink-refused-error.js";
import { RunError } from "../../src/errors/run-error.js";
import { cursorOfPage, leftoverTmpDirs, useCatalogFixture } from "../helpers/catalog-fixture.js";
import { control } from "../helpers/sandbox.js";

const fx = useCatalogFixture();

async function fault(kind: string, page: number, times?: number): Promise<void> {
  await control(fx.sandbox, "/_sandbox/faults", {
    product_page_fault: {
      after: cursorOfPage(fx.sandbox, page),
      kind,
      ...(times ? { times } : {}),
    },
  });
}

async function clearFault(): Promise<void> {
  await control(fx.sandbox, "/_sandbox/faults", { product_page_fault: null });
}

/** The sync fails with one line, and the snapshot published before it stays current. */
async function expectFailureKeepsCurrent(pattern: RegExp): Promise<void> {
  const before = await openCurrentSnapshot(fx.dataDir);
  const error = await fx.sync().catch((e: unknown) => e);
  expect(error).toBeInstanceOf(RunError);
  expect((error as Error).message).toMatch(pattern);
  expect((error as Error).message).toMatch(/the current snapshot is unchanged/);
  expect((error as Error).message).not.toContain("\n");
  const after = await openCurrentSnapshot(fx.dataDir);
  expect(after?.name).toBe(before?.name);
  expect(after?.manifest.sha256).toBe(before?.manifest.sha256);
  expect(await leftoverTmpDirs(fx.dataDir)).toEqual([]);
}

describe("a failing catalog sync", () => {
  it("retries a 500 a few times and then succeeds", async () => {
    await fault("500", 2, 2);
    const result = await fx.sync();
    expect(result.manifest.product_count).toBe(1200);
    const page2 = cursorOfPage(fx.sandbox, 2);
    expect(fx.requestedCursors.filter((c) => c === page2)).toHaveLength(3);
  });

  it("leaves the previous snapshot current when page 2 keeps failing", async () => {
    await fx.sync();
    await fault("500", 2);
    await expectFailureKeepsCurrent(/page 2: .*internal_server_error, HTTP 500/);
    // 1 try + 2 retries of page 2, nothing after it.
    const page2 = cursorOfPage(fx.sandbox, 2);
    expect(fx.requestedCursors.filter((c) => c === page2)).toHaveLength(1 + 1 + 2);
    await clearFault();
    await fx.sync();
    expect(await leftoverTmpDirs(fx.dataDir)).toEqual([]);
  });

  it("stops when the after cursor does not advance", async () => {
    await fx.sync();
    await fault("stuck_cursor", 2);
    await expectFailureKeepsCurrent(/cursor did not advance/);
  });

  it("stops on a malformed page", async () => {
    await fx.sync();
    await fault("malformed", 2);
    await expectFailureKeepsCurrent(/page 2 \(after .*\): the body is not JSON/);
  });

  it("fails when there is no snapshot yet, too, and publishes nothing", async () => {
    await fault("500", 2);
    await expect(fx.sync()).rejects.toThrow(RunError);
    expect(await openCurrentSnapshot(fx.dataDir)).toBeUndefined();
    expect(await leftoverTmpDirs(fx.dataDir)).toEqual([]);
  });

  it("cleans what a killed sync left behind on the next run", async () => {
    await fx.sync();
    // A pid that surely is gone: a child that has already exited.
    const dead = spawnSync(process.execPath, ["-e", ""]).pid;
    const leftover = join(fx.dataDir, "catalog", `tmp-${dead}-0badf00d`);
    await mkdir(leftover);
    await writeFile(join(leftover, "products.json"), '[\n{"code":"HALF"');
    await writeFile(join(fx.dataDir, "catalog", "current.json.tmp"), '{"snap');
    expect(await leftoverTmpDirs(fx.dataDir)).toHaveLength(2);
    await fx.sync();
    expect(await leftoverTmpDirs(fx.dataDir)).toEqual([]);
  });
});

describe("the shrink guard", () => {
  it("refuses to publish a catalog more than 20% smaller, unless allowed", async () => {
    const first = await fx.sync();
    const keep = fx.sandbox.state.catalog.products.slice(0, 900);
    await control(fx.sandbox, "/_sandbox/catalog", { catalog: keep });
    const error = await fx.sync().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ShrinkRefusedError);
    expect((error as ShrinkRefusedError).exitCode).toBe(1);
    expect((error as Error).message).toMatch(
      /900 products is 25% fewer than the current 1200 \(more than 20%\); the current snapshot/,
    );
    expect((await openCurrentSnapshot(fx.dataDir))?.name).toBe(first.snapshot);
    expect(await leftoverTmpDirs(fx.dataDir)).toEqual([]);

    const allowed = await fx.sync({ allowShrink: true });
    expect(allowed.manifest.product_count).toBe(900);
    expect((await openCurrentSnapshot(fx.dataDir))?.name).toBe(allowed.snapshot);
  });

  it("says when the filters changed since the current snapshot", async () => {
    await fx.sync();
    const error = await fx.sync({ filters: { countries: ["US"] } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ShrinkRefusedError);
    expect((error as Error).message).toMatch(
      /fewer than the current 1200 \(more than 20%\); the filters differ from the current snapshot's \(countries: - -> US\), which may explain it; the current snapshot is unchanged; rerun with --allow-shrink/,
    );
    const allowed = await fx.sync({ filters: { countries: ["US"] }, allowShrink: true });
    expect(allowed.manifest.filters.countries).toEqual(["US"]);
  });

  it("lets a shrink of exactly 20% through", async () => {
    await fx.sync();
    const keep = fx.sandbox.state.catalog.products.slice(0, 960);
    await control(fx.sandbox, "/_sandbox/catalog", { catalog: keep });
    expect((await fx.sync()).manifest.product_count).toBe(960);
    const current = await openCurrentSnapshot(fx.dataDir);
    expect(JSON.parse(await readFile(join(current!.dir, "products.json"), "utf8"))).toHaveLength(
      960,
    );
  });
});

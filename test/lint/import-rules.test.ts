import { execFile } from "node:child_process";
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { tmpDir } from "../helpers/tmp-dir.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DEPCRUISE = join(ROOT, "node_modules", ".bin", "depcruise");
const run = promisify(execFile);

/** Runs the project's import rules (as `npm run lint` does) over a small tree of `files`. */
async function cruise(files: Record<string, string>): Promise<{ code: number; out: string }> {
  const dir = await tmpDir("import-rules");
  await copyFile(join(ROOT, ".dependency-cruiser.cjs"), join(dir, ".dependency-cruiser.cjs"));
  await copyFile(join(ROOT, "tsconfig.json"), join(dir, "tsconfig.json"));
  // Both folders `npm run lint` names, even when a test's tree has nothing in one.
  await mkdir(join(dir, "src"), { recursive: true });
  await mkdir(join(dir, "jobs"), { recursive: true });
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, path, ".."), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  try {
    const { stdout } = await run(
      DEPCRUISE,
      ["src", "jobs", "--config", ".dependency-cruiser.cjs"],
      {
        cwd: dir,
      },
    );
    return { code: 0, out: stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, out: failed.stdout };
  }
}

describe("the import rules of npm run lint", () => {
  it("pass a tree that only imports downwards", async () => {
    const result = await cruise({
      "src/redis/redis-key.ts": "export const q = 1;\n",
      "src/ledger/ledger.ts": 'import { q } from "../redis/redis-key.js";\nexport const l = q;\n',
      "jobs/orders/process.ts":
        'import { l } from "../../src/ledger/ledger.js";\nexport const p = l;\n',
    });
    expect(result).toMatchObject({ code: 0 });
  });

  it("fail on an import circle, a type-only one included", async () => {
    const result = await cruise({
      "src/orders/a.ts": 'import type { B } from "./b.js";\nexport type A = { b?: B };\n',
      "src/orders/b.ts": 'import type { A } from "./a.js";\nexport type B = { a?: A };\n',
    });
    expect(result.code).not.toBe(0);
    expect(result.out).toContain("no-circular");
  });

  it("fail on an arrow from a lower layer up (redis importing the ledger)", async () => {
    const result = await cruise({
      "src/ledger/ledger.ts": "export type Ledger = { x: number };\n",
      "src/redis/workers.ts":
        'import type { Ledger } from "../ledger/ledger.js";\nexport type W = Ledger;\n',
    });
    expect(result.code).not.toBe(0);
    expect(result.out).toMatch(/redis-not-.*src\/redis\/workers\.ts → src\/ledger\/ledger\.ts/);
  });

  it("fail on the domain code importing a job (jobs/ is above it)", async () => {
    const result = await cruise({
      "jobs/orders/job.ts": "export const ORDERS_QUEUE = 'orders';\n",
      "src/campaigns/control.ts":
        'import { ORDERS_QUEUE } from "../../jobs/orders/job.js";\nexport const c = ORDERS_QUEUE;\n',
    });
    expect(result.code).not.toBe(0);
    expect(result.out).toMatch(
      /campaigns-not-.*src\/campaigns\/control\.ts → jobs\/orders\/job\.ts/,
    );
  });
});

import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";

const root = new URL("../", import.meta.url);
const packageJson = JSON.parse(readFileSync(new URL("package.json", root), "utf8")) as {
  allowScripts: Record<string, boolean>;
};

/** The version of `name` installed. */
function installed(name: string): string {
  const require = createRequire(root.pathname);
  return (require(`${name}/package.json`) as { version: string }).version;
}

function check(listed: unknown) {
  return spawnSync(process.execPath, ["scripts/check-install-scripts.mjs"], {
    cwd: root,
    input: JSON.stringify(listed),
    encoding: "utf8",
  });
}

describe("install scripts (docs/development.md)", () => {
  it("allows esbuild's and msgpackr-extract's, pinned to the versions installed", () => {
    expect(packageJson.allowScripts).toEqual({
      [`esbuild@${installed("esbuild")}`]: true,
      [`msgpackr-extract@${installed("msgpackr-extract")}`]: true,
    });
  });

  it("leaves BullMQ packing its jobs with the native msgpack", async () => {
    const bullmq = createRequire(root.pathname).resolve("bullmq");
    const msgpackr = (await import(createRequire(bullmq).resolve("msgpackr"))) as {
      isNativeAccelerationEnabled: boolean;
    };
    expect(msgpackr.isNativeAccelerationEnabled).toBe(true);
  });

  it("fails CI naming a dependency whose install script is not reviewed", () => {
    const pending = { name: "left-pad", changes: [{ key: "left-pad@1.3.0", change: "pending" }] };
    const refused = check({ allowScripts: [pending] });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("install scripts not reviewed: left-pad@1.3.0");
    expect(check({ allowScripts: [] }).status).toBe(0);
  });
});

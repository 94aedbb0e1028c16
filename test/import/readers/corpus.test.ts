import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { type CampaignEnv, campaignEnv, giftjobs } from "../../helpers/campaign-env.js";

// Files from other producers (docs/order-files.md): every file scripts/corpus/make.py wrote,
// imported by the CLI against a real sandbox and Redis, must say what the generator recorded.

const CORPUS = fileURLToPath(new URL("../../fixtures/corpus/", import.meta.url));

interface Expected {
  code: number;
  rows?: number;
  valid?: number;
  invalid?: number;
  totals?: Record<string, { face_value: string }>;
  file?: Record<string, unknown>;
  error?: { line: number | null; message: string };
}

interface Entry {
  file: string;
  producer: string;
  what: string;
  args: string[];
  expect: Expected;
}

const MANIFEST: { files: Entry[] } = JSON.parse(
  readFileSync(join(CORPUS, "manifest.json"), "utf8"),
);

let env: CampaignEnv | undefined;

afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

/** `orders import FILE --dry-run --json` of one corpus file, parsed. */
async function dryRun(entry: Entry) {
  env = await campaignEnv({}, "corpus");
  const args = ["orders", "import", join(CORPUS, entry.file), "--campaign", "corpus"];
  const run = await giftjobs(env, [...args, "--dry-run", "--json", ...entry.args]);
  return { run, json: JSON.parse(run.stdout) };
}

/** The JSON's errors, read as the refusal's line and message. */
function firstError(json: { errors: { line: number | null; message: string }[] }) {
  return json.errors.map((e) => ({ line: e.line, message: e.message }));
}

describe("order files from other producers", () => {
  it("lists every producer the issue names", () => {
    const producers = MANIFEST.files.map((f) => f.producer).join("\n");
    for (const name of ["openpyxl", "xlsxwriter", "pandas", "LibreOffice", "python"])
      expect(producers).toContain(name);
  });

  for (const entry of MANIFEST.files) {
    it(`${entry.file} (${entry.producer}): ${entry.what}`, async () => {
      const { run, json } = await dryRun(entry);
      const want = entry.expect;
      expect(run.code, JSON.stringify(json.errors)).toBe(want.code);
      if (want.error) {
        expect(firstError(json)).toContainEqual({
          line: want.error.line,
          message: expect.stringContaining(want.error.message),
        });
        return;
      }
      const { rows, valid, invalid, totals } = json;
      expect({ rows, valid, invalid }).toEqual({
        rows: want.rows,
        valid: want.valid,
        invalid: want.invalid,
      });
      expect(totals).toMatchObject(want.totals ?? {});
      expect(Object.keys(totals).sort()).toEqual(Object.keys(want.totals ?? {}).sort());
      expect(json.file ?? {}).toEqual(want.file);
    }, 30_000);
  }
});

import { spawn } from "node:child_process";
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { CatalogIndex } from "../../src/catalog/index-entry.js";
import type { ImportDeps } from "../../src/orders/import-campaign.js";
import { pickSampleProducts, sampleCsv } from "../../src/orders/sample-csv.js";
import { type CampaignEnv, quietLog } from "../helpers/campaign-env.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
// bin/giftjobs.js runs the compiled dist/; the tests run the sources through tsx.
const ENTRY =
  'import("./src/cli/main.ts").then((m) => m.main(["node", "giftjobs", ...process.argv.slice(1)]))';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `giftjobs ARGS` in a child process: exit codes and stdout are the program's own, and
 * process.exitCode or a stray write in one run cannot leak into the test runner or the next run.
 */
export function giftjobs(env: CampaignEnv, args: string[], extraEnv = {}): Promise<CliRun> {
  const child = spawn(process.execPath, ["--import", "tsx", "-e", ENTRY, "--", ...args], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      GIFTJOBS_API_URL: env.sandbox.url,
      GIFTJOBS_API_KEY: env.config.apiKey,
      GIFTJOBS_REDIS_URL: env.config.redisUrl,
      GIFTJOBS_PREFIX: env.config.prefix,
      GIFTJOBS_DATA_DIR: env.dataDir,
      GIFTJOBS_LOG_LEVEL: "warn",
      ...extraEnv,
    },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

export function depsOf(env: CampaignEnv): ImportDeps {
  return {
    ledger: env.ledger,
    catalog: env.index,
    client: env.client,
    log: quietLog,
  };
}

/** Writes `text` to `name` in the test's data dir; returns the path. */
export async function csvFile(env: CampaignEnv, name: string, text: string): Promise<string> {
  const path = join(env.dataDir, name);
  await writeFile(path, text, "utf8");
  return path;
}

/** A valid CSV of `rows` rows with references, and the currency its products are sold in. */
export function validCsv(
  index: CatalogIndex,
  rows: number,
  referencePrefix?: string,
): { text: string; currency: string } {
  const currency = pickSampleProducts(index)[0]!.currency;
  return { text: sampleCsv(index, { rows, referencePrefix, currency }), currency };
}

/** Order keys on the campaign's pending list (recorded, not yet handed to BullMQ), sorted. */
export async function pendingKeys(env: CampaignEnv, campaign: string): Promise<string[]> {
  const keys = await env.redis.lrange(env.ledger.keys(campaign).pending, 0, -1);
  return keys.sort();
}

/** Moves each line after the header to a new place (a fixed shuffle, so runs are repeatable). */
export function shuffleLines(text: string): string {
  const [header, ...lines] = text.trimEnd().split("\n");
  const shuffled = lines
    .map((line, i) => ({ line, rank: (i * 7919) % lines.length }))
    .sort((a, b) => a.rank - b.rank)
    .map((x) => x.line);
  return `${[header, ...shuffled].join("\n")}\n`;
}

/** Streams `rows` valid rows built from the snapshot to `path`; the text never exists whole. */
export async function writeLargeCsv(index: CatalogIndex, path: string, rows: number) {
  const products = pickSampleProducts(index, 8);
  const out = createWriteStream(path);
  out.write("email,product_code,face_value,reference\n");
  for (let i = 0; i < rows; i += 1000) {
    const lines: string[] = [];
    for (let j = i; j < Math.min(i + 1000, rows); j++) {
      const p = products[j % products.length]!;
      const d = p.denominations!;
      const face = d.type === "fixed" ? d.list[j % d.list.length]! : d.min;
      lines.push(`user-${j}@example.com,${p.code},${face},r-${j}`);
    }
    if (!out.write(`${lines.join("\n")}\n`)) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
}

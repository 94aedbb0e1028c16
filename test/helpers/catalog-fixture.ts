import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { ApiClient } from "../../src/api/client.js";
import type { RetryOptions } from "../../src/catalog/retry-policy.js";
import { type SyncCatalogOptions, syncCatalog } from "../../src/catalog/sync-catalog.js";
import { type Sandbox, type SandboxOptions, startSandbox } from "../../src/sandbox/index.js";
import { removeDir, tmpDir } from "./tmp-dir.js";

/** Retries that keep tests fast. */
export const FAST_RETRY: RetryOptions = {
  retries: 2,
  minDelayMs: 1,
  maxDelayMs: 5,
  rateLimitDelayMs: 1,
};

/** A sandbox plus a client whose every GET /v2/product cursor is recorded. */
export interface CatalogFixture {
  sandbox: Sandbox;
  client: ApiClient;
  /** `after` of each product page requested, in order ("" for the first page). */
  requestedCursors: string[];
  dataDir: string;
  /** syncCatalog against this sandbox and data dir with FAST_RETRY, plus `extra`. */
  sync(extra?: Partial<SyncCatalogOptions>): ReturnType<typeof syncCatalog>;
  close(): Promise<void>;
}

export async function catalogFixture(options: SandboxOptions = {}): Promise<CatalogFixture> {
  const sandbox = await startSandbox({ products: 1200, seed: 7, port: 0, ...options });
  const requestedCursors: string[] = [];
  const recordingFetch: typeof fetch = (input, init) => {
    const url = new URL(String(input));
    if (url.pathname === "/v2/product") requestedCursors.push(url.searchParams.get("after") ?? "");
    return fetch(input, init);
  };
  const client = new ApiClient({ baseUrl: sandbox.url, apiKey: "test-key", fetch: recordingFetch });
  const dataDir = await tmpDir("catalog");
  return {
    sandbox,
    client,
    requestedCursors,
    dataDir,
    sync: (extra = {}) => syncCatalog({ client, dataDir, retry: FAST_RETRY, ...extra }),
    close: async () => {
      await sandbox.close();
      await removeDir(dataDir);
    },
  };
}

/**
 * A fresh catalogFixture for each test of the file, closed after it. The object returned stays
 * the same; its fields are the current test's.
 */
export function useCatalogFixture(options: SandboxOptions = {}): CatalogFixture {
  const fx = {} as CatalogFixture;
  beforeEach(async () => {
    Object.assign(fx, await catalogFixture(options));
  });
  afterEach(async () => {
    await fx.close();
  });
  return fx;
}

/** The `after` cursor that requests page `n` (1-based) of the unfiltered catalog. */
export function cursorOfPage(sandbox: Sandbox, n: number, limit = 500): string {
  const product = sandbox.state.catalog.products[(n - 1) * limit - 1];
  if (!product) throw new Error(`no page ${n}`);
  return product.code;
}

/** Names in `catalog/` that are temporary directories (left over, when a test finds any). */
export async function leftoverTmpDirs(dataDir: string): Promise<string[]> {
  const names = await readdir(join(dataDir, "catalog")).catch(() => [] as string[]);
  return names.filter((n) => n.startsWith("tmp-") || n.endsWith(".tmp"));
}

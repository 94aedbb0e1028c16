import { join } from "node:path";
import { readCurrentPointer } from "./current-pointer.js";
import { readFileJson } from "./damaged-file-error.js";
import { replaceFileAtomically } from "./durable-files.js";
import type { CatalogIndex } from "./index-entry.js";
import { catalogDir } from "./snapshot-layout.js";

/** A product state pushed by the service (`product.update`) since the snapshot was synced. */
export interface StateOverride {
  state: string;
  old_state: string;
  /** When the service changed it (the message's `timestamp`): older messages are ignored. */
  timestamp: string;
  received_at: string;
}

/**
 * `catalog/overrides.json`: the states pushed since snapshot `snapshot` was published. The
 * snapshot itself is never modified (its files are the diff's "before"), so the next sync's diff
 * still shows each such change; overrides of an older snapshot are ignored, so publishing a
 * sync clears them. See docs/architecture.md, "Webhooks".
 */
interface OverridesFile {
  snapshot: string;
  products: Record<string, StateOverride>;
}

export function overridesPath(dataDir: string): string {
  return join(catalogDir(dataDir), "overrides.json");
}

async function readFileOf(dataDir: string): Promise<OverridesFile | undefined> {
  return readFileJson<OverridesFile>(overridesPath(dataDir));
}

/** The overrides of snapshot `name` (none when the file is of another snapshot). */
export async function readIndexOverrides(
  dataDir: string,
  name: string,
): Promise<Record<string, StateOverride>> {
  const file = await readFileOf(dataDir);
  return file?.snapshot === name ? file.products : {};
}

/** The index with each overridden product's state (its subscription plans' entries too). */
export function applyIndexOverrides(
  index: CatalogIndex,
  overrides: Record<string, StateOverride>,
): CatalogIndex {
  if (Object.keys(overrides).length === 0) return index;
  for (const entry of Object.values(index.entries)) {
    const override = overrides[entry.plan_of ?? entry.code] ?? overrides[entry.code];
    if (override) entry.state = override.state;
  }
  return index;
}

/** What recording a pushed state did. */
export type StateRecordResult = "applied" | "stale" | "no_snapshot";

// One writer at a time in this process: the file is read, changed and replaced whole.
let writing: Promise<unknown> = Promise.resolve();

/**
 * Records a product's pushed state against the current snapshot, unless a later one is
 * recorded already (messages may arrive out of order). The file is replaced atomically.
 */
export function recordProductState(
  dataDir: string,
  update: { product_code: string; old_state: string; new_state: string; timestamp: string },
): Promise<StateRecordResult> {
  const run = writing.then(() => record(dataDir, update));
  writing = run.catch(() => undefined);
  return run;
}

async function record(
  dataDir: string,
  update: { product_code: string; old_state: string; new_state: string; timestamp: string },
): Promise<StateRecordResult> {
  const pointer = await readCurrentPointer(dataDir);
  if (!pointer) return "no_snapshot";
  const current = await readFileOf(dataDir);
  const products = current?.snapshot === pointer.name ? current.products : {};
  const known = products[update.product_code];
  if (known && Date.parse(known.timestamp) >= Date.parse(update.timestamp)) return "stale";
  products[update.product_code] = {
    state: update.new_state,
    old_state: update.old_state,
    timestamp: update.timestamp,
    received_at: new Date().toISOString(),
  };
  const file: OverridesFile = { snapshot: pointer.name, products };
  await replaceFileAtomically(overridesPath(dataDir), `${JSON.stringify(file, null, 1)}\n`);
  return "applied";
}

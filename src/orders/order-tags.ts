import { access, mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fsyncPath, replaceFileAtomically } from "../catalog/durable-files.js";
import { TAG_CAMPAIGN, TAG_KEY } from "../ledger/order-tags.js";
import { LIMITS } from "./limits.js";

// The tags' names and values (the ledger makes them again when it reads a tagged order).
export { orderTags, TAG_KEY } from "../ledger/order-tags.js";

/**
 * Whether a row's own metadata leaves room for the tags (a one-row order carries the row's
 * metadata): at most 18 pairs of its own, none named like a tag. A row that leaves none is sent
 * untagged, as every order was before tags (its body is still a function of the row).
 */
export function roomForTags(metadata: Record<string, string>): boolean {
  const names = Object.keys(metadata);
  return names.length <= LIMITS.metadataKeys - 2 && !names.some((n) => n.startsWith("giftjobs_"));
}

/** The campaign and key an order's metadata names, when it carries both tags. */
export function tagsOf(
  metadata: Record<string, unknown> | null | undefined,
): { campaign: string; key: string } | undefined {
  const campaign = metadata?.[TAG_CAMPAIGN];
  const key = metadata?.[TAG_KEY];
  if (typeof campaign !== "string" || typeof key !== "string") return undefined;
  return { campaign, key };
}

/**
 * `$GIFTJOBS_DATA_DIR/campaigns/NAME/order-tags`: present when the campaign's orders carry the
 * tags. Tags change an order's body, and a key replays only the same body, so whether a
 * campaign's orders carry them is decided once, when it is created, and kept beside its order
 * journal: an import that rebuilds orders from the journal after a lost ledger
 * (docs/architecture/keys-and-exactly-once.md, "Lost ledger") builds them as they were sent.
 */
function tagsMarkerPath(dataDir: string, campaign: string): string {
  return join(dataDir, "campaigns", campaign, "order-tags");
}

export async function hasTagsMarker(dataDir: string, campaign: string): Promise<boolean> {
  try {
    await access(tagsMarkerPath(dataDir, campaign));
    return true;
  } catch {
    return false;
  }
}

/** Writes the marker, flushed with its folders, before any tagged order is journaled. */
export async function writeTagsMarker(dataDir: string, campaign: string): Promise<void> {
  const path = tagsMarkerPath(dataDir, campaign);
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  await replaceFileAtomically(path, `${TAG_CAMPAIGN} ${TAG_KEY}\n`);
  await fsyncPath(dirname(dir));
  await fsyncPath(dirname(dirname(dir)));
}

/**
 * Whether the orders an import records for a campaign carry the tags: yes when the marker is
 * there or the ledger's meta says so; for a campaign the ledger does not know, yes only when
 * its journal has no order either (a new campaign). A campaign from before tags, or one whose
 * ledger was lost and whose journal has orders but no marker, stays untagged: its orders must
 * be rebuilt with the bodies they were sent with.
 */
export function campaignTagsOrders(facts: {
  marker: boolean;
  /** The ledger's meta `order_tags`, undefined for a campaign the ledger does not know. */
  meta: { order_tags?: string } | undefined;
  journalOrders: number;
}): boolean {
  if (facts.marker) return true;
  if (facts.meta) return facts.meta.order_tags === "1";
  return facts.journalOrders === 0;
}

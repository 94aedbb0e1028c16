import { sha256 } from "../sha256.js";

/** Version prefix: a future change of the recipe gets new keys instead of colliding ones. */
const KEY_PREFIX = "gj1_";

/**
 * The X-Idempotency-Key of an order: hash(campaign, generation, sorted identities of its rows).
 * The same rows in the same campaign and generation always give the same key, in any row
 * order; the key is opaque (no e-mail, no reference), has no ':' and is never all digits,
 * 47 characters (the service allows 255).
 */
export function orderKey(
  campaign: string,
  generation: number,
  identities: readonly string[],
): string {
  if (identities.length === 0) throw new RangeError("an order key needs at least one row identity");
  if (!Number.isInteger(generation) || generation < 0) {
    throw new RangeError(`generation must be a whole number >= 0 (got ${generation})`);
  }
  // One row's order needs no copy to sort: an import makes a key a row.
  const sorted = identities.length === 1 ? identities : [...identities].sort();
  return KEY_PREFIX + sha256(JSON.stringify([campaign, generation, sorted]));
}

import { hash } from "node:crypto";

/**
 * Digest of a compact record line. The diff keeps one per previous product instead of the whole
 * line: about 90 bytes per code rather than 350, which is what lets a million products fit.
 * The one-shot crypto.hash is several times faster per short string than a hand-written hash.
 */
export function recordDigest(line: string): string {
  return hash("sha1", line, "base64");
}

import { hash } from "node:crypto";

/**
 * SHA-256 of a string, base64url. crypto.hash (Node 20.12+) hashes a short string in one call,
 * several times cheaper than building a Hash object: an import hashes each row four times.
 */
export function sha256(text: string): string {
  return hash("sha256", text, "base64url");
}

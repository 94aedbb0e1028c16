import { maskEmails } from "../log.js";

/**
 * A copy of `value` with every e-mail address in its strings masked. Order jobs carry the
 * recipients' addresses; the dashboard shows who was paid without listing the addresses.
 */
export function maskEmailsDeep(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return maskEmails(value);
  if (depth > 12 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => maskEmailsDeep(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) out[key] = maskEmailsDeep(v, depth + 1);
  return out;
}

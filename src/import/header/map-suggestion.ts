import { HEADER_SYNONYMS, headerKey } from "./header-synonyms.js";

/**
 * Words that hint at a field inside a longer header ("Work Email", "Gift Amount"): besides the
 * field's own name and synonyms, which are hints too.
 */
const HINTS: Readonly<Record<string, readonly string[]>> = {
  email: ["mail"],
  face_value: ["amount", "value", "amt", "sum"],
  product_code: ["product", "sku", "item", "code", "card"],
};

/** Edit distance (insert, delete, replace), for a header one typo away from a synonym. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const replace = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, replace);
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** Headers longer than this are not compared letter by letter (their cost grows squared). */
const COMPARED_CHARS = 60;

/** How much a header looks like a field: 0 not at all, up to 2 (contains a synonym whole). */
function likeness(header: string, field: string): number {
  const key = headerKey(header);
  if (key === "" || key.length > COMPARED_CHARS) return 0;
  const words = [field, ...(HEADER_SYNONYMS[field] ?? [])].map(headerKey);
  let best = 0;
  for (const word of [...words, ...(HINTS[field] ?? [])]) {
    if (key.includes(word)) best = Math.max(best, 1 + word.length / key.length);
    else best = Math.max(best, 1 - distance(key, word) / Math.max(key.length, word.length));
  }
  return best;
}

/** Below this likeness a header is no candidate: "Name" is not an e-mail. */
const LIKENESS_FLOOR = 0.7;

/**
 * The unclaimed header that most looks like `field`, for the `--map` that would fix a missing
 * column; undefined when none looks like it. Only the first `limit` headers are compared.
 */
export function mapCandidate(
  headers: readonly string[],
  field: string,
  limit = 1000,
): string | undefined {
  let best: { header: string; score: number } | undefined;
  for (const header of headers.slice(0, limit)) {
    const score = likeness(header, field);
    if (score >= LIKENESS_FLOOR && (best === undefined || score > best.score))
      best = { header, score };
  }
  return best?.header;
}

/**
 * `--map 'Header=field'`, quoted for a shell as parseColumnMap reads it (the last `=` splits);
 * a header with a `'` is written with `'\''`.
 */
export function mapOption(header: string, field: string): string {
  return `--map '${`${header.trim()}=${field}`.replaceAll("'", "'\\''")}'`;
}

import { createHash } from "node:crypto";

/** A recorded final response, replayed as it was for the same key and body. */
export interface RecordedResponse {
  status: number;
  body: string;
  headers: Record<string, string>;
}

type Entry =
  | { state: "running"; hash: string }
  | { state: "done"; hash: string; response: RecordedResponse };

/** JSON with keys sorted at every level, so that key order does not change the hash. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** Hash of a request body: of its canonical JSON, or of its raw text when it is not JSON. */
export function bodyHash(raw: string): string {
  let text = raw;
  try {
    text = canonical(JSON.parse(raw));
  } catch {
    // Not JSON: the raw bytes are what the key is bound to.
  }
  return createHash("sha256").update(text).digest("hex");
}

export type Lookup =
  | { kind: "new" }
  | { kind: "running" }
  | { kind: "conflict" }
  | { kind: "replay"; response: RecordedResponse };

/** Idempotency cache: per (API key, idempotency key), the body hash and the final response. */
export class IdempotencyCache {
  private readonly entries = new Map<string, Entry>();

  private static id(apiKey: string, key: string): string {
    return `${apiKey}\u0000${key}`;
  }

  /** Looks the key up; a new key is marked running at once, so a second request sees it. */
  begin(apiKey: string, key: string, hash: string): Lookup {
    const id = IdempotencyCache.id(apiKey, key);
    const entry = this.entries.get(id);
    if (!entry) {
      this.entries.set(id, { state: "running", hash });
      return { kind: "new" };
    }
    if (entry.hash !== hash) return { kind: "conflict" };
    if (entry.state === "running") return { kind: "running" };
    return { kind: "replay", response: entry.response };
  }

  finish(apiKey: string, key: string, hash: string, response: RecordedResponse): void {
    this.entries.set(IdempotencyCache.id(apiKey, key), { state: "done", hash, response });
  }

  /** Forgets a key whose request ended with nothing recorded (a transient 5xx). */
  abandon(apiKey: string, key: string): void {
    this.entries.delete(IdempotencyCache.id(apiKey, key));
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

import { createHash } from "node:crypto";

/** A recorded final response, replayed as it was for the same key and body. */
export interface RecordedResponse {
  status: number;
  body: string;
  headers: Record<string, string>;
}

// The raw body is kept, not a hash of it: a retry sends the very same bytes, and comparing them
// costs nothing, where canonical JSON and sha256 of every body took a fifth of the sandbox's
// CPU per order (bench: orders). Bodies that differ in bytes are compared canonically.
type Entry =
  | { state: "running"; body: string }
  | { state: "done"; body: string; response: RecordedResponse };

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
function bodyHash(raw: string): string {
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

/** Whether two request bodies are the same request: the same bytes, or the same JSON. */
function sameBody(a: string, b: string): boolean {
  return a === b || bodyHash(a) === bodyHash(b);
}

/** Idempotency cache: per (API key, idempotency key), the request body and the final response. */
export class IdempotencyCache {
  private readonly entries = new Map<string, Entry>();

  private static id(apiKey: string, key: string): string {
    return `${apiKey}\u0000${key}`;
  }

  /** Looks the key up; a new key is marked running at once, so a second request sees it. */
  begin(apiKey: string, key: string, body: string): Lookup {
    const id = IdempotencyCache.id(apiKey, key);
    const entry = this.entries.get(id);
    if (!entry) {
      this.entries.set(id, { state: "running", body });
      return { kind: "new" };
    }
    if (!sameBody(entry.body, body)) return { kind: "conflict" };
    if (entry.state === "running") return { kind: "running" };
    return { kind: "replay", response: entry.response };
  }

  finish(apiKey: string, key: string, body: string, response: RecordedResponse): void {
    this.entries.set(IdempotencyCache.id(apiKey, key), { state: "done", body, response });
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

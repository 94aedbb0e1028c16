import { randomFillSync } from "node:crypto";

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

function encodeTime(ms: number): string {
  let out = "";
  let value = ms;
  for (let i = 0; i < 10; i++) {
    out = (CROCKFORD[value % 32] as string) + out;
    value = Math.floor(value / 32);
  }
  return out;
}

// Random bytes are drawn a pool at a time: one randomBytes call per identifier cost more than
// the rest of making an order (bench: orders).
const pool = Buffer.alloc(4096);
let used = pool.length;

function encodeRandom(length: number): string {
  if (used + length > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  let out = "";
  for (let i = used; i < used + length; i++) out += CROCKFORD[(pool[i] as number) % 32];
  used += length;
  return out;
}

/** Adds one to a Crockford base32 string, carrying leftwards (a 16-character part never overflows). */
function incrementBase32(text: string): string {
  const chars = text.split("");
  for (let i = chars.length - 1; i >= 0; i--) {
    const next = CROCKFORD.indexOf(chars[i] as string) + 1;
    if (next < CROCKFORD.length) {
      chars[i] = CROCKFORD[next] as string;
      return chars.join("");
    }
    chars[i] = "0";
  }
  return chars.join("");
}

let lastTime = -1;
let lastRandom = "";

/**
 * A ULID-like identifier: 10 time characters then 16 random ones, Crockford base32. Monotonic, as
 * ULID's monotonic factory: within one millisecond (or a clock that stepped back) the random part
 * of the last one is incremented, so ids sort in the order they were made. GET /v2/order pages by
 * id, and two orders made in the same millisecond must not swap places.
 */
function ulidLike(now = Date.now()): string {
  if (now <= lastTime) {
    lastRandom = incrementBase32(lastRandom);
    return encodeTime(lastTime) + lastRandom;
  }
  lastTime = now;
  lastRandom = encodeRandom(16);
  return encodeTime(now) + lastRandom;
}

export function orderId(now?: number): string {
  return `O-${ulidLike(now)}`;
}

export function itemId(now?: number): string {
  return `E-${ulidLike(now)}`;
}

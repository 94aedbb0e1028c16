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

/** A ULID-like identifier: 10 time characters then 16 random ones, Crockford base32. */
function ulidLike(now = Date.now()): string {
  return encodeTime(now) + encodeRandom(16);
}

export function orderId(now?: number): string {
  return `O-${ulidLike(now)}`;
}

export function itemId(now?: number): string {
  return `E-${ulidLike(now)}`;
}

import { randomBytes } from "node:crypto";

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

function encodeRandom(length: number): string {
  const bytes = randomBytes(length);
  let out = "";
  for (const byte of bytes) out += CROCKFORD[byte % 32];
  return out;
}

/** A ULID-like identifier: 10 time characters then 16 random ones, Crockford base32. */
export function ulidLike(now = Date.now()): string {
  return encodeTime(now) + encodeRandom(16);
}

export function orderId(now?: number): string {
  return `O-${ulidLike(now)}`;
}

export function itemId(now?: number): string {
  return `E-${ulidLike(now)}`;
}

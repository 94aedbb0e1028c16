import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from "node:crypto";

/**
 * A named user's token and its hash (docs/architecture/operators.md, "Dashboard users"). The
 * token is `gjd.ID.SECRET`: ID (12 hex digits) is public and also in the users file, so the
 * dashboard finds the one line to check instead of hashing a guess against every line; SECRET
 * is 32 random bytes. The file keeps only `scrypt$N$r$p$SALT$KEY` of the whole token: a slow,
 * salted hash, so a copy of the file gives no token back.
 */
const TOKEN_PATTERN = /^gjd\.([0-9a-f]{12})\.[\w-]{43}$/;

/** scrypt's cost: about 16 MiB and some tens of milliseconds per check. */
const COST = { N: 16384, r: 8, p: 1 } as const;
const KEY_BYTES = 32;
const HASH = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([\w-]{22})\$([\w-]{43})$/;

export interface TokenHash {
  N: number;
  r: number;
  p: number;
  salt: Buffer;
  key: Buffer;
}

/** A new random token and its id. */
export function newToken(): { token: string; id: string } {
  const id = randomBytes(6).toString("hex");
  return { token: `gjd.${id}.${randomBytes(32).toString("base64url")}`, id };
}

/** The id of a token of the users file's kind, or undefined for any other text. */
export function tokenId(token: string): string | undefined {
  return TOKEN_PATTERN.exec(token)?.[1];
}

/** The hash of `token` as the users file holds it. */
export async function hashToken(token: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(token, { ...COST, salt });
  return `scrypt$${COST.N}$${COST.r}$${COST.p}$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

/** The parts of a hash, or the problem with it in a few words. */
export function parseHash(text: string): TokenHash | string {
  const m = HASH.exec(text);
  if (!m)
    return "the hash is not scrypt$N$r$p$SALT$KEY (write lines with `giftjobs dashboard add-user`)";
  const [N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // Bounds that keep one check within 64 MiB and about a second: a line cannot make a login
  // take the machine's memory.
  if (N < 2 || N > 2 ** 20 || (N & (N - 1)) !== 0)
    return `scrypt's N ${m[1]} is not a power of 2 up to 2^20`;
  if (r < 1 || p < 1 || p > 16) return `scrypt's r ${m[2]} or p ${m[3]} is out of range`;
  if (128 * N * r > 64 * 2 ** 20)
    return `scrypt's N ${m[1]} and r ${m[2]} ask for more than 64 MiB (128 * N * r)`;
  return { N, r, p, salt: Buffer.from(m[4]!, "base64url"), key: Buffer.from(m[5]!, "base64url") };
}

/** True when `token` hashes to `hash`, compared in constant time. */
export async function tokenMatches(token: string, hash: TokenHash): Promise<boolean> {
  const key = await derive(token, hash);
  return key.length === hash.key.length && timingSafeEqual(key, hash.key);
}

function derive(token: string, hash: Omit<TokenHash, "key">): Promise<Buffer> {
  const options: ScryptOptions = {
    N: hash.N,
    r: hash.r,
    p: hash.p,
    maxmem: 256 * hash.N * hash.r + 1024 * 1024,
  };
  // The callback form runs in libuv's pool: a check never holds up other requests.
  return new Promise((resolve, reject) =>
    scrypt(token, hash.salt, KEY_BYTES, options, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

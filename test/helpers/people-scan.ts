import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import type { Redis } from "ioredis";
import type pg from "pg";

/**
 * Where any of `needles` (e-mails, references, names; compared in lower case) is still found:
 * every key under `prefix` (SCAN, then each value by its TYPE), every file under `dir`
 * (recursively, .gz files unpacked), and every table of a PostgreSQL schema. Each finding is
 * named (`redis KEY`, `file PATH`, `table NAME`) with the needle found.
 */
export async function findPeople(
  needles: string[],
  where: { redis?: Redis; prefix?: string; dir?: string; pool?: pg.Pool; schema?: string },
): Promise<string[]> {
  const lower = needles.map((n) => n.toLowerCase());
  const found: string[] = [];
  const check = (place: string, text: string) => {
    const t = text.toLowerCase();
    for (const needle of lower) if (t.includes(needle)) found.push(`${place}: ${needle}`);
  };
  if (where.redis && where.prefix)
    for (const [key, text] of await redisValues(where.redis, where.prefix))
      check(`redis ${key}`, text);
  if (where.dir) for (const [path, text] of await fileTexts(where.dir)) check(`file ${path}`, text);
  if (where.pool && where.schema)
    for (const [table, text] of await tableTexts(where.pool, where.schema))
      check(`table ${table}`, text);
  return found;
}

/** Every key under the prefix with its value as text (its name included). */
async function redisValues(redis: Redis, prefix: string): Promise<[string, string][]> {
  const keys: string[] = [];
  let cursor = "0";
  do {
    const [next, batch] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== "0");
  const out: [string, string][] = [];
  for (const key of keys) {
    const type = await redis.type(key);
    let value: unknown;
    if (type === "string") value = await redis.get(key);
    else if (type === "hash") value = await redis.hgetall(key);
    else if (type === "list") value = await redis.lrange(key, 0, -1);
    else if (type === "set") value = await redis.smembers(key);
    else if (type === "zset") value = await redis.zrange(key, "0", "-1", "WITHSCORES");
    else if (type === "stream") value = await redis.xrange(key, "-", "+");
    else value = `unread type ${type}`;
    out.push([key, `${key} ${JSON.stringify(value)}`]);
  }
  return out;
}

async function fileTexts(dir: string): Promise<[string, string][]> {
  const out: [string, string][] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await fileTexts(path)));
    else {
      const bytes = await readFile(path);
      const text = path.endsWith(".gz")
        ? gunzipSync(bytes).toString("utf8")
        : bytes.toString("utf8");
      out.push([path, `${path} ${text}`]);
    }
  }
  return out;
}

async function tableTexts(pool: pg.Pool, schema: string): Promise<[string, string][]> {
  const { rows } = await pool.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = $1",
    [schema],
  );
  const out: [string, string][] = [];
  for (const { table_name } of rows) {
    const all = await pool.query(
      `SELECT row_to_json(t)::text AS j FROM "${schema}"."${table_name}" t`,
    );
    out.push([table_name, all.rows.map((r: { j: string }) => r.j).join("\n")]);
  }
  return out;
}

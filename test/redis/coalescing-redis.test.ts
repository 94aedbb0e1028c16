import { afterEach, describe, expect, it } from "vitest";
import { CoalescingRedis, connectRedis } from "../../src/redis/connection.js";
import { cleanPrefix, REDIS_URL, testRedis, uniquePrefix } from "../helpers/redis.js";

const prefix = uniquePrefix("coalesce");
let redis: CoalescingRedis | undefined;

afterEach(async () => {
  if (!redis) return;
  await cleanPrefix(redis, prefix);
  redis.disconnect();
  redis = undefined;
});

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe("CoalescingRedis", () => {
  it("holds one turn's commands in one write and answers each, in order", async () => {
    redis = connectRedis(REDIS_URL, { coalesceWrites: true }) as CoalescingRedis;
    expect(redis).toBeInstanceOf(CoalescingRedis);
    await redis.ping();
    const key = `${prefix}:n`;
    const replies = Array.from({ length: 500 }, () => redis!.incr(key));
    // Nothing left yet: the socket is corked until the end of this turn.
    expect(redis.stream.writableCorked).toBe(1);
    expect(await Promise.all(replies)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
    expect(redis.stream.writableCorked).toBe(0);
  });

  it("keeps scripts, transactions and later turns working", async () => {
    redis = connectRedis(REDIS_URL, { coalesceWrites: true }) as CoalescingRedis;
    redis.defineCommand("gjAdd", {
      numberOfKeys: 1,
      lua: "return redis.call('INCRBY', KEYS[1], ARGV[1])",
    });
    const key = `${prefix}:s`;
    const adder = redis as CoalescingRedis & { gjAdd(key: string, n: number): Promise<number> };
    const [a, tx] = await Promise.all([
      adder.gjAdd(key, 5),
      redis.multi().incr(key).get(key).exec(),
    ]);
    expect(a).toBe(5);
    expect(tx).toEqual([
      [null, 6],
      [null, "6"],
    ]);
    await nextTurn();
    expect(await adder.gjAdd(key, 1)).toBe(7);
  });

  it("goes on after the connection drops and comes back", async () => {
    redis = connectRedis(REDIS_URL, { coalesceWrites: true, forWorker: true }) as CoalescingRedis;
    const key = `${prefix}:r`;
    await redis.set(key, "1");
    const killer = testRedis();
    try {
      const id = await redis.client("ID");
      await killer.client("KILL", "ID", String(id));
    } finally {
      await killer.quit();
    }
    // Queued offline while it reconnects, then sent: nothing is lost in a stale cork.
    const answers = await Promise.all([redis.incr(key), redis.incr(key), redis.get(key)]);
    expect(answers).toEqual([2, 3, "3"]);
  });
});

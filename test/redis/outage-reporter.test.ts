import { afterEach, describe, expect, it, vi } from "vitest";
import { setStderrOverlay } from "../../src/log.js";
import { isRedisAway, OutageReporter, redisAddress } from "../../src/redis/outage-reporter.js";

describe("OutageReporter", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  function reporter() {
    const lines: string[] = [];
    const outage = new OutageReporter("10.0.0.5:6380", (line) => lines.push(line));
    return { outage, lines };
  }

  it("says Redis is away once every 5 s however many errors come, and once that it is back", () => {
    vi.useFakeTimers();
    const { outage, lines } = reporter();
    const refused = Object.assign(new Error("connect ECONNREFUSED 10.0.0.5:6380"), {
      code: "ECONNREFUSED",
    });
    for (let s = 0; s < 12; s++) {
      for (let i = 0; i < 50; i++) expect(outage.failed(refused)).toBe(true);
      vi.advanceTimersByTime(1000);
    }
    outage.answered();
    expect(lines).toEqual([
      "giftjobs: Redis at 10.0.0.5:6380 is not answering (1 s): waiting for it; nothing is lost\n",
      "giftjobs: Redis at 10.0.0.5:6380 is not answering (6 s): waiting for it; nothing is lost\n",
      "giftjobs: Redis at 10.0.0.5:6380 is not answering (11 s): waiting for it; nothing is lost\n",
      "giftjobs: Redis is back after 12 s\n",
    ]);
    outage.close();
  });

  it("says nothing of a reconnect shorter than a second, and leaves other errors to the caller", () => {
    vi.useFakeTimers();
    const { outage, lines } = reporter();
    expect(outage.failed(new Error("Connection is closed."))).toBe(true);
    vi.advanceTimersByTime(500);
    outage.answered();
    vi.advanceTimersByTime(10_000);
    expect(lines).toEqual([]);
    expect(outage.failed(new Error("ERR unknown command 'FOO'"))).toBe(false);
    outage.close();
  });

  it("writes its lines above a progress bar (the overlay), not into it", () => {
    vi.useFakeTimers();
    const events: string[] = [];
    setStderrOverlay({ clear: () => events.push("clear"), redraw: () => events.push("redraw") });
    try {
      // The default writer: stderr, above the overlay.
      const outage = new OutageReporter("10.0.0.5:6380");
      expect(outage.failed(new Error("connect ECONNREFUSED 10.0.0.5:6380"))).toBe(true);
      vi.advanceTimersByTime(1000);
      outage.answered();
      outage.close();
    } finally {
      setStderrOverlay(undefined);
    }
    // One line away, one back: each cleared the bar before and drew it again after.
    expect(events).toEqual(["clear", "redraw", "clear", "redraw"]);
  });

  it("names Redis by host and port only, never with its password", () => {
    expect(redisAddress({ redisUrl: "redis://user:s3cret@redis.internal:6390/2" })).toBe(
      "redis.internal:6390",
    );
    expect(redisAddress({ redisUrl: "rediss://:s3cret@redis.internal" })).toBe(
      "redis.internal:6379",
    );
    expect(
      redisAddress({
        redisUrl: "redis://:s3cret@x",
        redisClusterNodes: [
          { host: "10.0.0.1", port: 7000 },
          { host: "10.0.0.2", port: 7001 },
        ],
      }),
    ).toBe("10.0.0.1:7000,10.0.0.2:7001");
    expect(isRedisAway(new Error("Reached the max retries per request limit (which is 3)"))).toBe(
      true,
    );
  });
});

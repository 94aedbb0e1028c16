import { Writable } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError, ServiceUnreachableError } from "../../src/api/errors/index.js";
import { createLogger } from "../../src/log.js";
import { ServiceWatch } from "../../src/worker/service-watch.js";

/** A watch whose lines, marks and removals are recorded. */
function watch() {
  const lines: { level: number; msg: string }[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      lines.push(JSON.parse(String(chunk)) as { level: number; msg: string });
      cb();
    },
  });
  const marks: string[] = [];
  const unmarks: string[] = [];
  const service = new ServiceWatch({
    url: "http://user:secret@10.0.0.7:4010/",
    log: createLogger({ destination, pretty: false }),
    mark: async (campaign, reason) => {
      marks.push(`${campaign} ${reason}`);
    },
    unmark: async (campaign) => {
      unmarks.push(campaign);
    },
    onError: (error) => {
      throw error;
    },
  });
  return { service, lines, marks, unmarks };
}

const refused = () =>
  new ServiceUnreachableError({
    url: "http://10.0.0.7:4010",
    reason: "connection refused by 10.0.0.7:4010",
    type: "connection_refused",
  });
const serverError = () =>
  new ApiError("ServerError", { status: 503, type: "service_unavailable", message: "try later" });

describe("ServiceWatch", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("says nothing of a failure the next answer ends, nor of answers that are refusals", () => {
    vi.useFakeTimers();
    const { service, lines, marks } = watch();
    service.ended("c", serverError());
    vi.advanceTimersByTime(3000);
    service.ended("c");
    service.ended("c", serverError());
    vi.advanceTimersByTime(60_000); // one failure alone, however long: no outage
    service.ended(
      "c",
      new ApiError("RateLimitedError", { status: 429, type: "rate_limited", message: "x" }),
    );
    service.ended(
      "c",
      new ApiError("NetworkError", { status: 0, type: "aborted", message: "cancelled" }),
    );
    service.ended("c", new Error("a bug"));
    vi.advanceTimersByTime(60_000);
    expect(lines).toEqual([]);
    expect(marks).toEqual([]);
    service.close();
  });

  it("one line once failures last, one every 30 s while they go on, one when it answers", async () => {
    vi.useFakeTimers();
    const { service, lines, marks, unmarks } = watch();
    for (let i = 0; i < 20; i++) {
      service.ended(i % 2 ? "a" : "b", refused());
      vi.advanceTimersByTime(300);
    }
    await vi.advanceTimersByTimeAsync(1000);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [
        40,
        "cannot reach the service at http://10.0.0.7:4010 for 5 s (connection_refused: connection refused by 10.0.0.7:4010): orders wait and are retried under their same keys; check that the service is up and GIFTJOBS_API_URL is right",
      ],
    ]);
    expect(marks.sort()).toEqual([
      "a service_unreachable: http://10.0.0.7:4010: connection_refused: connection refused by 10.0.0.7:4010",
      "b service_unreachable: http://10.0.0.7:4010: connection_refused: connection refused by 10.0.0.7:4010",
    ]);
    expect(service.contact()).toMatchObject({
      url: "http://10.0.0.7:4010",
      last_error: "connection_refused: connection refused by 10.0.0.7:4010",
      unreachable_since: expect.any(String),
    });
    // Requests still fail: the next line after 30 s, with the last error; none without failures.
    service.ended("a", serverError());
    await vi.advanceTimersByTimeAsync(30_000);
    expect(lines).toHaveLength(2);
    expect(lines[1]!.msg).toContain("(HTTP 503 service_unavailable: try later)");
    await vi.advanceTimersByTimeAsync(60_000);
    expect(lines).toHaveLength(2);
    service.ended("b");
    await vi.advanceTimersByTimeAsync(0);
    expect(lines[2]).toMatchObject({
      level: 30,
      msg: expect.stringMatching(
        /^the service at http:\/\/10\.0\.0\.7:4010 answers again after \d+ s$/,
      ),
    });
    expect(unmarks.sort()).toEqual(["a", "b"]);
    expect(service.contact().unreachable_since).toBeNull();
    for (const line of lines) expect(JSON.stringify(line)).not.toContain("secret");
    service.close();
  });
  it("knows the service down from its first line to the next answer; a campaign whose jobs wait unsent is marked too", async () => {
    vi.useFakeTimers();
    const { service, marks, unmarks } = watch();
    service.waiting("w"); // not down: nothing to mark
    service.ended("a", refused());
    vi.advanceTimersByTime(3000);
    service.ended("a", refused());
    expect(service.isDown()).toBe(false);
    await vi.advanceTimersByTimeAsync(3000);
    expect(service.isDown()).toBe(true);
    expect(marks.map((m) => m.split(" ")[0])).toEqual(["a"]);
    service.waiting("w");
    service.waiting("w");
    service.waiting("a");
    await vi.advanceTimersByTimeAsync(0);
    expect(marks.map((m) => m.split(" ")[0])).toEqual(["a", "w"]);
    service.ended("a");
    await vi.advanceTimersByTimeAsync(0);
    expect(service.isDown()).toBe(false);
    expect(unmarks.sort()).toEqual(["a", "w"]);
    service.close();
  });
});

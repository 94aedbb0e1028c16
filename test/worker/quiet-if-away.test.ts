import { describe, expect, it } from "vitest";
import type { Logger } from "../../src/log.js";
import { OutageReporter } from "../../src/redis/outage-reporter.js";
import { quietIfAway } from "../../src/worker/queue-runner.js";

describe("quietIfAway: what a worker logs of BullMQ's errors", () => {
  function logged(message: string): string[] {
    const lines: string[] = [];
    const log = {
      info: (_fields: unknown, msg: string) => lines.push(`info ${msg}`),
      error: (_fields: unknown, msg: string) => lines.push(`error ${msg}`),
    } as unknown as Logger;
    const outage = new OutageReporter("127.0.0.1:6379", () => {});
    quietIfAway(outage, log, new Error(message), "worker error");
    outage.close();
    return lines;
  }

  it("a job's lock or the job itself gone after an outage (taken over, finished by its taker) is an info line", () => {
    const takenOver = "info a job's lock ran out (Redis away too long?); it is taken over";
    expect(logged("Missing lock for job outage.65. moveToFinished")).toEqual([takenOver]);
    expect(logged("Missing key for job outage.65. moveToFinished")).toEqual([takenOver]);
    expect(logged("Missing key for job outage.65. moveToDelayed")).toEqual([takenOver]);
    expect(logged("could not renew lock for job outage.7")).toEqual([takenOver]);
  });

  it("any other error is an error line", () => {
    expect(logged("Missing key for parent job p.1. addJob")).toEqual(["error worker error"]);
    expect(logged("ERR unknown command")).toEqual(["error worker error"]);
  });
});

import type { FileHandle } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { BackgroundFlush } from "../../src/catalog/durable-files.js";

/** A handle whose datasync calls are counted and end when the test says so. */
function fakeHandle() {
  const pending: (() => void)[] = [];
  const handle = {
    calls: 0,
    datasync() {
      handle.calls += 1;
      return new Promise<void>((resolve) => pending.push(resolve));
    },
  };
  return { handle, endFlush: () => pending.shift()?.() };
}

describe("BackgroundFlush", () => {
  it("starts a flush every N bytes, one at a time, and settle() waits for it", async () => {
    const { handle, endFlush } = fakeHandle();
    const flush = new BackgroundFlush(handle as unknown as FileHandle, 100);
    flush.wrote(60);
    expect(handle.calls).toBe(0);
    flush.wrote(60);
    expect(handle.calls).toBe(1);
    // Another 100 bytes while the first flush runs: no second one on top of it.
    flush.wrote(150);
    expect(handle.calls).toBe(1);

    let settled = false;
    const settling = flush.settle().then(() => {
      settled = true;
    });
    await Promise.resolve();
    expect(settled).toBe(false);
    endFlush();
    await settling;
    expect(settled).toBe(true);

    flush.wrote(100);
    expect(handle.calls).toBe(2);
  });

  it("fails settle() with a failed flush's error, which a later fsync might not repeat", async () => {
    const handle = { datasync: () => Promise.reject(new Error("EIO: i/o error, fdatasync")) };
    const flush = new BackgroundFlush(handle as unknown as FileHandle, 10);
    flush.wrote(10);
    await expect(flush.settle()).rejects.toThrow("EIO");
  });
});

import { hash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { DigestTable } from "../../src/orders/digest-table.js";

const digest = (text: string) => hash("sha256", text, "buffer");

describe("DigestTable", () => {
  it("keeps 100,000 keys through its growth, each with its own value", () => {
    const table = new DigestTable();
    for (let i = 0; i < 100_000; i++) table.set(digest(`k${i}`), i * 3);
    expect(table.size).toBe(100_000);
    for (let i = 0; i < 100_000; i += 7) expect(table.get(digest(`k${i}`))).toBe(i * 3);
    expect(table.get(digest("k100000"))).toBeUndefined();
  });

  it("made for a count, keeps that many and more (no power of two of slots)", () => {
    const table = new DigestTable(30_000);
    for (let i = 0; i < 50_000; i++) table.set(digest(`k${i}`), i);
    expect(table.size).toBe(50_000);
    for (let i = 0; i < 50_000; i += 3) expect(table.get(digest(`k${i}`))).toBe(i);
    expect(table.get(digest("k50000"))).toBeUndefined();
  });

  it("makes room for a count it is told later, keeping the keys it has, in less than doubling takes", () => {
    const grown = new DigestTable();
    const reserved = new DigestTable();
    for (let i = 0; i < 1000; i++) {
      grown.set(digest(`k${i}`), i);
      reserved.set(digest(`k${i}`), i);
    }
    reserved.reserve(100_000);
    reserved.reserve(10);
    for (let i = 1000; i < 100_000; i++) {
      grown.set(digest(`k${i}`), i);
      reserved.set(digest(`k${i}`), i);
    }
    expect(reserved.size).toBe(100_000);
    for (let i = 0; i < 100_000; i += 7) expect(reserved.get(digest(`k${i}`))).toBe(i);
    expect(reserved.get(digest("k100000"))).toBeUndefined();
    // 20 bytes a slot: 1.33 slots a key, where doubling at half full came to 2.6 here.
    expect(reserved.bytes).toBeLessThanOrEqual(Math.ceil(100_000 / 0.75 + 1) * 20);
    expect(grown.bytes).toBeGreaterThan(reserved.bytes * 1.5);
    // Told too few, it still grows.
    for (let i = 100_000; i < 150_000; i++) reserved.set(digest(`k${i}`), i);
    expect(reserved.get(digest("k149999"))).toBe(149_999);
  });

  it("of 8-byte keys, keeps 100,000 through its growth in 12 bytes a slot, and takes keys alike in those 8 as one", () => {
    const table = new DigestTable(undefined, 8);
    for (let i = 0; i < 100_000; i++) table.set(digest(`k${i}`), i);
    expect(table.size).toBe(100_000);
    for (let i = 0; i < 100_000; i += 7) expect(table.get(digest(`k${i}`))).toBe(i);
    expect(table.get(digest("k100000"))).toBeUndefined();
    expect(table.bytes % 12).toBe(0);
    const other = Buffer.from(digest("k42"));
    other[8] = other[8]! ^ 0xff;
    expect(table.get(other)).toBe(42);
  });

  it("overwrites a value without counting the key twice, and keeps 0", () => {
    const table = new DigestTable();
    table.set(digest("a"), 0);
    expect(table.get(digest("a"))).toBe(0);
    table.set(digest("a"), 5);
    expect(table.get(digest("a"))).toBe(5);
    expect(table.size).toBe(1);
  });

  it("counts with increment as get and set do, through its growth", () => {
    const table = new DigestTable();
    for (let round = 0; round < 3; round++)
      for (let i = 0; i < 10_000; i++) expect(table.increment(digest(`k${i}`))).toBe(round);
    expect(table.size).toBe(10_000);
    expect(table.get(digest("k42"))).toBe(3);
    table.set(digest("k42"), 0xfffffffe);
    expect(() => table.increment(digest("k42"))).toThrow(RangeError);
  });

  it("claims a key once (the first value stays) and replaces a value telling the one before, through its growth", () => {
    const table = new DigestTable();
    for (let i = 0; i < 10_000; i++) expect(table.claim(digest(`k${i}`), i)).toBeUndefined();
    for (let i = 0; i < 10_000; i += 9) expect(table.claim(digest(`k${i}`), 7)).toBe(i);
    expect(table.size).toBe(10_000);
    expect(table.get(digest("k18"))).toBe(18);
    expect(table.replace(digest("k18"), 5)).toBe(18);
    expect(table.replace(digest("new"), 6)).toBeUndefined();
    expect([table.get(digest("k18")), table.get(digest("new")), table.size]).toEqual([
      5, 6, 10_001,
    ]);
    expect(() => table.claim(digest("x"), -1)).toThrow(RangeError);
    expect(() => table.replace(digest("x"), 0xffffffff)).toThrow(RangeError);
  });

  it("tells keys apart by all 16 bytes, whatever slot they land in", () => {
    const table = new DigestTable();
    // Same first word (same slot), different later bytes: only the full key compares equal.
    const base = new Uint8Array(32);
    const other = new Uint8Array(32);
    other[15] = 1;
    table.set(base, 1);
    expect(table.get(other)).toBeUndefined();
    table.set(other, 2);
    expect([table.get(base), table.get(other), table.size]).toEqual([1, 2, 2]);
    // Beyond byte 16 nothing counts: the table keys on a 128-bit prefix.
    const tail = new Uint8Array(32);
    tail[20] = 9;
    expect(table.get(tail)).toBe(1);
  });

  it("refuses values it cannot hold and keys shorter than 16 bytes", () => {
    const table = new DigestTable();
    expect(() => table.set(digest("a"), -1)).toThrow(RangeError);
    expect(() => table.set(digest("a"), 2 ** 32)).toThrow(RangeError);
    expect(() => table.set(digest("a"), 1.5)).toThrow(RangeError);
    expect(() => table.get(new Uint8Array(8))).toThrow(RangeError);
  });
});

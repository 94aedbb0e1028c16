import { appendFile, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DamagedFileError } from "../../src/catalog/damaged-file-error.js";
import { loadConfig } from "../../src/config.js";
import { paidFingerprint } from "../../src/orders/paid-fingerprint.js";
import { FilePaidMemory, type NewPaidEntry } from "../../src/orders/paid-memory.js";
import { row } from "../helpers/csv.js";
import { tmpDir } from "../helpers/tmp-dir.js";

function entry(n: number, fingerprint = `fp-${n}`): NewPaidEntry {
  return { fingerprint, identity: `ref:${n}`, line: n + 1, currency: "USD", face: "1000" };
}

describe("the paid fingerprint", () => {
  it("is who is paid what: the file's spelling, line, description and metadata do not count", () => {
    const base = row({ email: "Jane@Example.com", product_code: "P1", face_value: "25.00" });
    const same = paidFingerprint(base, "USD");
    expect(same).toBeDefined();
    const respelt = row({
      email: "  jane@example.com ",
      product_code: "P1",
      face_value: "25",
      line: 90,
      description: "other",
      metadata: { team: "x" },
      reference: "another",
    });
    expect(paidFingerprint(respelt, "USD")).toBe(same);
    for (const other of [
      row({ ...base, email: "john@example.com" }),
      row({ ...base, product_code: "P2" }),
      row({ ...base, face_value: "50.00" }),
    ])
      expect(paidFingerprint(other, "USD")).not.toBe(same);
    expect(paidFingerprint(base, "EUR")).not.toBe(same);
    // A choice in any order is one choice; a link row is its reference's, or nobody's.
    const choice = (codes: string[]) =>
      paidFingerprint(row({ ...base, product_code: "", product_codes: codes }), "USD");
    expect(choice(["A", "B"])).toBe(choice(["B", "A"]));
    const link = { ...base, email: "", distribution: "link" as const };
    expect(paidFingerprint(row({ ...link, reference: "L-1" }), "USD")).toBeDefined();
    expect(paidFingerprint(row(link), "USD")).toBeUndefined();
  });
});

describe("the paid memory in files", () => {
  it("finds other campaigns' rows in the window, not the campaign's own, nor older ones", async () => {
    const memory = new FilePaidMemory(await tmpDir("paid-memory"));
    const a = memory.appender("a");
    await a.append([entry(1), entry(2)]);
    await a.close();
    const b = memory.appender("b");
    await b.append([entry(2)]);
    await b.close();
    const lookup = await memory.lookup("b", 0);
    const found = await lookup.find(["fp-1", "fp-2", "fp-3", undefined]);
    expect(found.map((list) => list.map((e) => [e.campaign, e.line]))).toEqual([
      [["a", 2]],
      [["a", 3]],
      [],
      [],
    ]);
    // A window that starts after they were recorded sees none of them.
    const later = await memory.lookup("b", Date.now() + 1000);
    expect((await later.find(["fp-1"]))[0]).toEqual([]);
    expect((await memory.campaigns()).sort()).toEqual(["a", "b"]);
  });

  it("skips a last line torn by a crash; a damaged line names its file and line", async () => {
    const dir = await tmpDir("paid-torn");
    const memory = new FilePaidMemory(dir);
    const a = memory.appender("a");
    await a.append([entry(1)]);
    await a.close();
    const path = join(dir, "campaigns", "a", "paid.ndjson");
    await appendFile(path, '{"t":1,"r":[["fp-9"');
    expect(
      (await (await memory.lookup("b", 0)).find(["fp-1", "fp-9"])).map((l) => l.length),
    ).toEqual([1, 0]);
    // The next append cuts the torn line first (as the journal's writer does).
    const again = memory.appender("a");
    await again.append([entry(3)]);
    await again.close();
    expect((await readFile(path, "utf8")).trimEnd().split("\n")).toHaveLength(2);
    await appendFile(path, "not json\n");
    await expect(memory.lookup("b", 0)).rejects.toThrow(DamagedFileError);
    await expect(memory.lookup("b", 0)).rejects.toThrow(/paid\.ndjson.*line 3/);
  });

  it("names the imports of the same file's bytes into other campaigns", async () => {
    const memory = new FilePaidMemory(await tmpDir("paid-files"));
    await memory.recordFile("a", "abc", 5);
    await memory.recordFile("b", "abc", 5);
    await memory.recordFile("c", "other", 1);
    const like = await memory.filesLike("abc", "b", 0);
    expect(like.map((f) => [f.campaign, f.rows])).toEqual([["a", 5]]);
  });
});

describe("GIFTJOBS_REPEAT_WINDOW_DAYS", () => {
  it("is 90 days unless set, a whole number of at least 1", () => {
    expect(loadConfig({ env: {} }).repeatWindowDays).toBe(90);
    expect(loadConfig({ env: { GIFTJOBS_REPEAT_WINDOW_DAYS: "30" } }).repeatWindowDays).toBe(30);
    expect(() => loadConfig({ env: { GIFTJOBS_REPEAT_WINDOW_DAYS: "0" } })).toThrow(
      /GIFTJOBS_REPEAT_WINDOW_DAYS: must be at least 1/,
    );
  });
});

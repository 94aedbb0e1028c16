import { readdir } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { PaidIndex } from "../../src/orders/paid-index.js";
import { sha256 } from "../../src/sha256.js";
import { tmpDir } from "../helpers/tmp-dir.js";

/** A new index whose file goes under a folder of the test's own. */
async function newIndex(expected?: number): Promise<PaidIndex> {
  return PaidIndex.create(expected, await tmpDir("paid-index"));
}

describe("PaidIndex", () => {
  it("gives back each fingerprint's entries as added, exactly, and none for one it never saw", async () => {
    const index = await newIndex();
    const fp = sha256("jane");
    index.add("gifts", 1000, [fp, "ref:abc", 2, "USD", "2500"]);
    index.add("bonus", 2000, [sha256("joe"), "h:xyz.0", 3, "EUR", "1000"]);
    index.add("bonus", 3000, [fp, "ref:déjà vu", 9, "USD", "99999999999999999999"]);
    const [jane, nobody, none] = index.find([fp, sha256("nobody"), undefined]);
    expect(jane).toEqual([
      {
        campaign: "gifts",
        fingerprint: fp,
        identity: "ref:abc",
        line: 2,
        currency: "USD",
        face: "2500",
        at: 1000,
      },
      {
        campaign: "bonus",
        fingerprint: fp,
        identity: "ref:déjà vu",
        line: 9,
        currency: "USD",
        face: "99999999999999999999",
        at: 3000,
      },
    ]);
    expect(nobody).toEqual([]);
    expect(none).toEqual([]);
    expect(index.size).toBe(3);
    await index.close();
  });

  it("gives back identities that are digests exactly, packed or not", async () => {
    const index = await newIndex(4);
    const digest = sha256("a reference");
    // The last character of a 32-byte digest's base64url carries two unused bits: one that
    // sets them is not what the digest's bytes give back, so it is kept as text.
    const odd = `${digest.slice(0, 42)}B`;
    const identities = [`ref:${digest}`, `h:${digest}.12`, `ref:${odd}`, `h:${odd}.0`, "h:x y.1"];
    identities.forEach((identity, i) => {
      index.add(`c${i}`, 1000 + i, [sha256(`fp${i}`), identity, i, "USD", String(i)]);
    });
    expect(index.find(identities.map((_, i) => sha256(`fp${i}`))).map(([e]) => e)).toEqual(
      identities.map((identity, i) => ({
        campaign: `c${i}`,
        fingerprint: sha256(`fp${i}`),
        identity,
        line: i,
        currency: "USD",
        face: String(i),
        at: 1000 + i,
      })),
    );
    await index.close();
  });

  it("takes fingerprints that are no SHA-256 text, and grows past its first room", async () => {
    const index = await newIndex();
    for (let i = 0; i < 10_000; i++)
      index.add("gifts", i, [`fp-${i % 5000}`, `ref:${i}`, i, "USD", String(i)]);
    const [fp42, fp4999, fp5000] = index.find(["fp-42", "fp-4999", "fp-5000"]);
    expect(fp42!.map((e) => e.identity)).toEqual(["ref:42", "ref:5042"]);
    expect(fp4999!.map((e) => e.line)).toEqual([4999, 9999]);
    expect(fp5000).toEqual([]);
    await index.close();
  });

  it("reads back every entry of a file written in many pieces, asked for in any order, records of any length among them", async () => {
    const index = await newIndex(12_000);
    // Identities of every length from a few bytes to 1.5 MB: records shorter and longer than
    // a read's guess, than a read, and than the buffer the records are written through.
    const identityOf = (i: number) =>
      i % 1000 === 7
        ? `ref:${"é".repeat(i === 8_007 ? 800_000 : i % 9000)}`
        : `ref:${sha256(`${i}`)}`;
    for (let i = 0; i < 12_000; i++)
      index.add(`c${i % 3}`, 1000 + Math.floor(i / 500), [
        sha256(`person ${i % 8_000}`),
        identityOf(i),
        i + 2,
        i % 2 ? "USD" : "EUR",
        String(i),
      ]);
    // Asked for backwards and shuffled, each person twice in one call, some nobody.
    const people = [...Array(8_000).keys()].reverse();
    const asked = [...people, ...people.filter((p) => p % 3 === 0), 8_000, 8_001];
    const found = index.find(asked.map((p) => sha256(`person ${p}`)));
    const entryOf = (person: number, i: number) => ({
      campaign: `c${i % 3}`,
      fingerprint: sha256(`person ${person}`),
      identity: identityOf(i),
      line: i + 2,
      currency: i % 2 ? "USD" : "EUR",
      face: String(i),
      at: 1000 + Math.floor(i / 500),
    });
    // One comparison of the whole answer: an expect per entry took seconds.
    expect(found).toEqual(
      asked.map((person) =>
        (person < 4_000 ? [person, person + 8_000] : person < 8_000 ? [person] : []).map((i) =>
          entryOf(person, i),
        ),
      ),
    );
    await index.close();
  });

  it("tells apart fingerprints whose digests begin alike, which its table keys as one", async () => {
    const index = await newIndex();
    // Base64url of 32 bytes, alike in the first 15: the table keys by the first 8.
    const first = "A".repeat(43);
    const second = `${"A".repeat(20)}B${"A".repeat(22)}`;
    index.add("gifts", 1, [first, "ref:first", 2, "USD", "100"]);
    index.add("gifts", 1, [second, "ref:second", 3, "USD", "200"]);
    index.add("bonus", 2, [first, "ref:first again", 4, "USD", "100"]);
    const [a, b] = index.find([first, second]);
    expect(a!.map((e) => e.identity)).toEqual(["ref:first", "ref:first again"]);
    expect(b!.map((e) => [e.identity, e.fingerprint])).toEqual([["ref:second", second]]);
    await index.close();
  });

  it("leaves no file behind in its folder, even while open, and answers nothing once closed", async () => {
    const folder = await tmpDir("paid-index");
    const index = await PaidIndex.create(undefined, folder);
    index.add("gifts", 1, [sha256("jane"), "ref:abc", 2, "USD", "2500"]);
    expect(index.find([sha256("jane")])[0]).toHaveLength(1);
    expect(await readdir(folder)).toEqual([]);
    await index.close();
    await index.close();
    expect(() => index.find([sha256("jane")])).toThrow("the paid index is closed");
  });
});

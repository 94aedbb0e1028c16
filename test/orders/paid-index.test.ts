import { describe, expect, it } from "vitest";
import { PaidIndex } from "../../src/orders/paid-index.js";
import { sha256 } from "../../src/sha256.js";

describe("PaidIndex", () => {
  it("gives back each fingerprint's entries as added, exactly, and none for one it never saw", () => {
    const index = new PaidIndex();
    const fp = sha256("jane");
    index.add("gifts", 1000, [fp, "ref:abc", 2, "USD", "2500"]);
    index.add("bonus", 2000, [sha256("joe"), "h:xyz.0", 3, "EUR", "1000"]);
    index.add("bonus", 3000, [fp, "ref:déjà vu", 9, "USD", "99999999999999999999"]);
    expect(index.find(fp)).toEqual([
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
    expect(index.find(sha256("nobody"))).toEqual([]);
    expect(index.size).toBe(3);
  });

  it("gives back identities that are digests exactly, packed or not", () => {
    const index = new PaidIndex(4);
    const digest = sha256("a reference");
    // The last character of a 32-byte digest's base64url carries two unused bits: one that
    // sets them is not what the digest's bytes give back, so it is kept as text.
    const odd = `${digest.slice(0, 42)}B`;
    const identities = [`ref:${digest}`, `h:${digest}.12`, `ref:${odd}`, `h:${odd}.0`, "h:x y.1"];
    identities.forEach((identity, i) => {
      index.add(`c${i}`, 1000 + i, [sha256(`fp${i}`), identity, i, "USD", String(i)]);
    });
    expect(identities.map((_, i) => index.find(sha256(`fp${i}`))[0])).toEqual(
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
  });

  it("takes fingerprints that are no SHA-256 text, and grows past its first room", () => {
    const index = new PaidIndex();
    for (let i = 0; i < 10_000; i++)
      index.add("gifts", i, [`fp-${i % 5000}`, `ref:${i}`, i, "USD", String(i)]);
    expect(index.find("fp-42").map((e) => e.identity)).toEqual(["ref:42", "ref:5042"]);
    expect(index.find("fp-4999").map((e) => e.line)).toEqual([4999, 9999]);
    expect(index.find("fp-5000")).toEqual([]);
  });
});

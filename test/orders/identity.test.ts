import { describe, expect, it } from "vitest";
import { validateRow } from "../../src/import/validation/row-validation.js";
import {
  contentHash,
  identityAndPayload,
  OccurrenceCounter,
  payloadHash,
  rowIdentity,
} from "../../src/orders/identity.js";
import { orderKey } from "../../src/orders/keys.js";
import { sha256 } from "../../src/sha256.js";
import { readAll, row } from "../helpers/csv.js";

const HEADER = "email,product_code,face_value,reference,description,metadata.a,metadata.b";
const LINES = [
  "jane@example.com,X,10.50,,hi,1,2",
  "jane@example.com,X,10.50,,hi,1,2", // identical: a second, deliberate card
  "john@example.com,X,25,R-1,,,",
  "ann@example.com,Y,5,R-2,,x,",
  "bob@example.com,Y,5,,,,",
];

async function identitiesOf(lines: string[]): Promise<string[]> {
  const occurrences = new OccurrenceCounter();
  const identities: string[] = [];
  for (const item of await readAll(`${HEADER}\n${lines.join("\n")}\n`)) {
    if (item.kind !== "row") throw new Error("unexpected row error");
    const result = validateRow(item);
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    identities.push(rowIdentity(result.row, occurrences));
  }
  return identities;
}

function shuffled<T>(items: T[], seed: number): T[] {
  const out = [...items];
  let state = seed;
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe("row identity and order keys", () => {
  it("gives the same identities and keys for the same file in any row order", async () => {
    const original = await identitiesOf(LINES);
    expect(new Set(original).size).toBe(LINES.length);
    for (const seed of [1, 2, 3, 4, 5]) {
      const again = await identitiesOf(shuffled(LINES, seed));
      expect([...again].sort()).toEqual([...original].sort());
      expect(orderKey("spring", 0, again)).toBe(orderKey("spring", 0, original));
    }
  });

  it("gives identical rows distinct identities and keys", async () => {
    const [first, second] = await identitiesOf(LINES);
    expect(first).not.toBe(second);
    expect(first?.replace(/\.\d+$/, "")).toBe(second?.replace(/\.\d+$/, ""));
    expect(orderKey("c", 0, [first!])).not.toBe(orderKey("c", 0, [second!]));
  });

  it("normalises e-mail case and spacing, face value zeros and metadata order", () => {
    const a = row({ email: "Jane@Example.com", face_value: "10.50", metadata: { b: "2", a: "1" } });
    const b = row({ email: "jane@example.com", face_value: "10.5", metadata: { a: "1", b: "2" } });
    expect(contentHash(a)).toBe(contentHash(b));
    expect(payloadHash(a)).toBe(payloadHash(b));
    expect(contentHash(row({ face_value: "10.51" }))).not.toBe(
      contentHash(row({ face_value: "10.5" })),
    );
  });

  it("keeps a default template out of the identity but in the payload hash", () => {
    const plain = row();
    const withDefault = row({ template_id: "T1", template_source: "default" });
    const withOwn = row({ template_id: "T1", template_source: "row" });
    expect(rowIdentity(withDefault, new OccurrenceCounter())).toBe(
      rowIdentity(plain, new OccurrenceCounter()),
    );
    expect(payloadHash(withDefault)).not.toBe(payloadHash(plain));
    expect(contentHash(withOwn)).not.toBe(contentHash(plain));
  });

  it("identifies a referenced row by its reference; a changed row keeps it, with another payload hash", () => {
    const before = row({ reference: "R-1", face_value: "10" });
    const after = row({ reference: "R-1", face_value: "20" });
    const counter = new OccurrenceCounter();
    expect(rowIdentity(before, counter)).toBe(rowIdentity(after, counter));
    expect(payloadHash(before)).not.toBe(payloadHash(after));
  });

  it("gives the import's identity and payload hash as rowIdentity and payloadHash do, each text hashed once", () => {
    const rows = [
      row(),
      row(),
      row({ template_id: "T1", template_source: "default" }),
      row({ template_id: "T1", template_source: "row" }),
      row({ reference: "R-9" }),
      row({ selection_template_id: "S1", currency: "EUR", currency_source: "default" }),
      row({ selection_template_id: "S1", currency: "EUR", currency_source: "row" }),
    ];
    const apart = new OccurrenceCounter();
    const together = new OccurrenceCounter();
    for (const r of rows)
      expect(identityAndPayload(r, together)).toEqual({
        identity: rowIdentity(r, apart),
        payload: payloadHash(r),
      });
  });

  it("holds nothing readable in identities or keys", async () => {
    const identities = await identitiesOf(LINES);
    for (const identity of identities) {
      expect(identity).toMatch(/^(ref|h):[A-Za-z0-9_-]{43}(\.\d+)?$/);
      expect(identity).not.toMatch(/example|R-1|jane/);
    }
  });

  it("makes keys opaque: no ':', not all digits, short, versioned", () => {
    const keys = new Set<string>();
    for (let generation = 0; generation < 50; generation++) {
      const key = orderKey("campaign:with:colons", generation, ["ref:abc", "h:def.0"]);
      expect(key).toMatch(/^gj1_[A-Za-z0-9_-]{43}$/);
      expect(key).not.toContain(":");
      expect(key).not.toMatch(/^\d+$/);
      expect(key.length).toBeLessThanOrEqual(255);
      keys.add(key);
    }
    expect(keys.size).toBe(50);
  });

  it("separates campaigns and generations", () => {
    const ids = ["h:x.0"];
    expect(orderKey("a", 0, ids)).not.toBe(orderKey("b", 0, ids));
    expect(orderKey("a", 0, ids)).not.toBe(orderKey("a", 1, ids));
    expect(() => orderKey("a", 0, [])).toThrow(RangeError);
    expect(() => orderKey("a", -1, ids)).toThrow(RangeError);
  });

  it("counts occurrences per content hash", () => {
    const counter = new OccurrenceCounter();
    const [a, b] = [sha256("a"), sha256("b")];
    expect([counter.next(a), counter.next(b), counter.next(a), counter.next(a)]).toEqual([
      0, 0, 1, 2,
    ]);
  });
});

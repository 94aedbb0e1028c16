import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ApiClient } from "../../src/api/client.js";
import type { OrderEstimateRequest } from "../../src/api/order-estimate.js";
import { UserError } from "../../src/errors/user-error.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { RowSpool, type SpoolEntry } from "../../src/import/row-spool.js";
import type { OrderRow } from "../../src/orders/order-row.js";
import { type CampaignEnv, campaignEnv, depsOf } from "../helpers/campaign-env.js";
import { csvFile, validCsv } from "../helpers/csv.js";
import { tmpDir } from "../helpers/tmp-dir.js";

let env: CampaignEnv | undefined;

afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

const row = (line: number): OrderRow => ({
  line,
  email: `p${line}@example.com`,
  product_code: "P1",
  face_value: "10.50",
  template_source: "none",
  metadata: { team: 'a,b\n"c"' },
});

describe("the row spool", () => {
  it("gives back every entry in order and leaves no file behind, even before close", async () => {
    const scratch = await tmpDir("spool-test");
    const spool = await RowSpool.create(scratch);
    // Unlinked at once: a crash from here on leaves no e-mail address on disk.
    expect(await readdir(scratch)).toEqual([]);
    const entries: SpoolEntry[] = [];
    for (let i = 0; i < 3000; i++) {
      entries.push({
        kind: "new",
        identity: `ref:${i}`,
        payload: `h${i}`,
        currency: "EUR",
        face: String(i),
        price: String(i - 1),
        row: row(i),
      });
    }
    await spool.write(entries.slice(0, 1234));
    await spool.write([]);
    await spool.write(entries.slice(1234));
    const read: SpoolEntry[] = [];
    for await (const batch of spool.read()) read.push(...batch);
    await spool.close();
    expect(read).toEqual(entries);
    expect(await readdir(scratch)).toEqual([]);
  });

  it("gives back a row with every field, its repeats and fingerprint, exactly (no field lost)", async () => {
    const scratch = await tmpDir("spool-test");
    const spool = await RowSpool.create(scratch);
    // Required: a field added to OrderRow must be added here, and so to the spool's line.
    const full: Required<OrderRow> = {
      line: 7,
      email: "",
      product_code: "",
      face_value: "0.50",
      template_id: "T1",
      template_source: "row",
      description: "Thanks",
      reference: "r-7",
      send_at: 1_800_000_000_000,
      metadata: { team: "x", empty: "" },
      distribution: "recipient",
      recipient_reference: "rr",
      product_codes: ["A", "B"],
      selection_template_id: "S1",
      currency: "EUR",
      currency_source: "row",
    };
    const entries: SpoolEntry[] = [
      {
        kind: "new",
        identity: "ref:a",
        payload: "h",
        currency: "EUR",
        face: "50",
        price: "48",
        row: full,
        repeat_of: { rows: [{ campaign: "gifts", line: 3 }], more: 2 },
        fingerprint: "f",
      },
      {
        kind: "new",
        identity: "ref:b",
        payload: "h",
        currency: "EUR",
        face: "1",
        price: "1",
        row: row(8),
      },
      {
        // What the line's cells are made of: tabs, line ends, backslashes, an escape's look.
        kind: "new",
        identity: "ref:c",
        payload: "h",
        currency: "EUR",
        face: "1",
        price: "1",
        row: {
          ...full,
          email: "a\tb@example.com",
          description: "one\ntwo\r\nthree\\e \\t\t",
          reference: "\\e",
          template_id: "",
          metadata: { "tab\tkey": "line\nvalue\\", "": "" },
          product_codes: ["A\tB", "\\", ""],
          recipient_reference: "\\\\n",
        },
        repeat_of: { rows: [{ campaign: "tab\tname", line: 1 }] },
      },
      {
        kind: "new",
        identity: "ref:d",
        payload: "h",
        currency: "EUR",
        face: "1",
        price: "1",
        row: row(9),
        repeat_of: {
          rows: [
            { campaign: "q4.gifts_2026-01", line: 12 },
            { campaign: "B", line: 4 },
          ],
          more: 90,
        },
      },
      {
        kind: "new",
        identity: "ref:e",
        payload: "h",
        currency: "EUR",
        face: "1",
        price: "1",
        row: row(10),
        repeat_of: { rows: [], more: 1 },
      },
    ];
    await spool.write(entries);
    const read: SpoolEntry[] = [];
    for await (const batch of spool.read()) read.push(...batch);
    await spool.close();
    expect(read).toStrictEqual(entries);
  });

  it("refuses an unusable folder with one line naming TMPDIR, and leaves nothing there", async () => {
    const scratch = await tmpDir("spool-test");
    // A file where a folder should be: mkdtemp fails (permissions would not stop root).
    const notAFolder = join(scratch, "file");
    await writeFile(notAFolder, "");
    const refused = RowSpool.create(notAFolder);
    await expect(refused).rejects.toBeInstanceOf(UserError);
    await expect(refused).rejects.toThrow(
      new RegExp(`^cannot create the import's spool file in ${notAFolder} \\(set TMPDIR `),
    );
    expect(await readdir(scratch)).toEqual(["file"]);
  });
});

describe("import pass 2", () => {
  it("sends the rows pass 1 checked, however the file changes between the passes", async () => {
    env = await campaignEnv({}, "spool");
    const e = env;
    const { text } = validCsv(e.index, 40, "ref-");
    const file = await csvFile(e, "orders.csv", text);
    // The balance is asked for between the passes: the file is rewritten there, every face
    // value made invalid and a row added. Re-reading the file would now record unchecked rows.
    const lines = text.trimEnd().split("\n");
    const client = {
      estimateOrder: (request: OrderEstimateRequest) => e.client.estimateOrder(request),
      getBalance: async () => {
        const edited = lines.map((l, i) => (i === 0 ? l : l.replace(/,([\d.]+),/, ",99999999,")));
        await writeFile(file, `${[...edited, edited[1]!.replace("ref-", "new-")].join("\n")}\n`);
        return { balance: "1000000000", currency: "USD" };
      },
    } as unknown as ApiClient;

    const result = await importCampaign({ file, campaign: "edited" }, { ...depsOf(e), client });

    expect(result).toMatchObject({ rows: 40, valid: 40, enqueued: 40, orders: 40 });
    expect(await readFile(file, "utf8")).toContain("99999999");
    const recorded: string[] = [];
    for await (const [, r] of e.ledger.orders.rows("edited")) recorded.push(r.face_value);
    expect(recorded).toHaveLength(40);
    expect(recorded).not.toContain("99999999");
    expect(await e.ledger.dispatch.pendingCount("edited")).toBe(40);
  });
});

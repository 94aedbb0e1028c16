import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { access, link, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { stringify } from "csv-stringify";
import { fsyncPath } from "../catalog/durable-files.js";
import { UserError } from "../errors/user-error.js";
import type { Ledger, LedgerOrder, LedgerRow } from "../ledger/ledger.js";
import { neutralise } from "./report.js";
import { storedState } from "./state.js";

/**
 * The links file of `orders links` (docs/commands.md, "orders links"): one line per completed
 * row whose payout link the ledger kept, for the operator to hand out. A payout link is money
 * in the open: whoever holds it redeems it. So the ledger keeps links only when the workers are
 * told to (`--store-payout-urls`), and this file is the one place they are written: never the
 * report, the dashboard, a log or a metric.
 */
const LINK_COLUMNS = ["line", "reference", "email", "url", "expiry"] as const;

export interface PayoutLinksOptions {
  /** Every completed row's link, not only link rows' (an e-mail to send again). */
  all?: boolean;
}

export interface PayoutLinksResult {
  campaign: string;
  /** Lines written. */
  rows: number;
  /** Completed rows it would write whose link the ledger did not keep. */
  without_url: number;
  file: string;
}

interface LinkLine {
  line: number;
  identity: string;
  cells: string[];
}

/** Whether a completed row belongs in the file: link rows, or every row with `all`. */
function wanted(row: LedgerRow, options: PayoutLinksOptions): boolean {
  return options.all === true || row.distribution === "link";
}

/** The file's lines in row-line order, and how many wanted rows have no link kept. */
async function linkLines(
  ledger: Ledger,
  campaign: string,
  options: PayoutLinksOptions,
): Promise<{ lines: LinkLine[]; withoutUrl: number }> {
  const rows: [string, LedgerRow][] = [];
  for await (const entry of ledger.orders.rows(campaign))
    if (wanted(entry[1], options)) rows.push(entry);
  const numbers = [...new Set(rows.map(([, row]) => row.order))];
  const orders = new Map<number, LedgerOrder | undefined>();
  for (let i = 0; i < numbers.length; i += 500) {
    const batch = numbers.slice(i, i + 500);
    const found = await ledger.orders.getOrders(campaign, batch);
    for (const [j, n] of batch.entries()) orders.set(n, found[j]);
  }
  const lines: LinkLine[] = [];
  let withoutUrl = 0;
  for (const [identity, row] of rows) {
    const order = orders.get(row.order);
    if (order?.status !== "completed") continue;
    const at = order.identities.indexOf(identity);
    const url = at < 0 ? "" : (order.payout_urls?.[at] ?? "");
    if (url === "") {
      withoutUrl += 1;
      continue;
    }
    const expiry = order.payout_expiries?.[at] ?? "";
    const cells = [String(row.line), row.reference ?? "", row.email, url, expiry];
    lines.push({ line: row.line, identity, cells: cells.map(neutralise) });
  }
  lines.sort((a, b) => a.line - b.line || (a.identity < b.identity ? -1 : 1));
  return { lines, withoutUrl };
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

function refuseExisting(path: string): never {
  throw new UserError(
    `${path} exists: a links file is never overwritten (it holds money); ` +
      "name a new file with --out",
  );
}

/**
 * Writes the CSV of `records` to `path`, which must not exist: a private temporary file (0600)
 * beside it, flushed, then linked to `path` (a link, unlike a rename, never replaces a file that
 * appeared meanwhile), and the folder flushed.
 */
async function writeNewPrivateFile(path: string, records: string[][]): Promise<void> {
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}`);
  try {
    // Created private ("wx": never an existing file); the umask can only take bits away.
    const file = createWriteStream(temporary, { flags: "wx", mode: 0o600 });
    await pipeline(records, stringify({ header: true, columns: [...LINK_COLUMNS] }), file);
    await fsyncPath(temporary);
  } catch (error) {
    await unlink(temporary).catch(() => {});
    throw error;
  }
  try {
    await link(temporary, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") refuseExisting(path);
    throw error;
  } finally {
    await unlink(temporary);
  }
  await fsyncPath(dirname(path));
}

/**
 * Writes the campaign's payout links to `path` (a new file, 0600). Refused, with the reason in
 * one line, when the file exists, the campaign is archived, or the ledger kept no link to write.
 */
export async function writePayoutLinks(
  ledger: Ledger,
  campaign: string,
  path: string,
  options: PayoutLinksOptions = {},
): Promise<PayoutLinksResult> {
  if (await exists(path)) refuseExisting(path);
  if (storedState(await ledger.campaigns.meta(campaign)) === "archived")
    throw new UserError(
      `campaign ${campaign} is archived: its links are in its archive's ledger; ` +
        `orders restore --campaign ${campaign} first`,
    );
  const { lines, withoutUrl } = await linkLines(ledger, campaign, options);
  if (lines.length === 0) {
    const rows = options.all ? "completed rows" : "completed link rows (distribution link)";
    const why =
      withoutUrl === 0
        ? `campaign ${campaign} has no ${rows}`
        : `campaign ${campaign}: no payout link kept for its ${withoutUrl} ${rows}`;
    throw new UserError(
      `${why}; links are kept only while workers run with --store-payout-urls ` +
        "(giftjobs worker --store-payout-urls; giftjobs webhooks --store-payout-urls)",
    );
  }
  await writeNewPrivateFile(
    path,
    lines.map((l) => l.cells),
  );
  return { campaign, rows: lines.length, without_url: withoutUrl, file: path };
}

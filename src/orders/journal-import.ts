import { createHash } from "node:crypto";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import type pg from "pg";
import { readNumberedLineBatches } from "../catalog/line-reader.js";
import { takeTransactionLock } from "../db/advisory-lock.js";
import { type Database, inTransaction } from "../db/open-database.js";
import { UserError } from "../errors/user-error.js";
import { plural } from "../plural.js";
import { type JournalLine, journalPath } from "./journal.js";
import { JournalIndex } from "./journal-index.js";
import { hasTagsMarker } from "./order-tags.js";
import { INSERT_JOURNAL_LINES } from "./pg-journal.js";

/** Lines inserted per statement: a page, so a large journal is never one query's worth. */
const PAGE = 5000;

/** What became of one campaign's file journal. */
export interface JournalMove {
  campaign: string;
  /** Orders (lines) the file holds. */
  orders: number;
  /** `moved`: copied in now; `already`: the database holds the same lines (an earlier run). */
  outcome: "moved" | "already";
}

/**
 * Copies the order journals a data dir kept before GIFTJOBS_DATABASE_URL was set
 * (`campaigns/NAME/orders.ndjson`, and the tags marker beside it) into `order_journal`, each
 * campaign in one transaction, so a lost ledger of those campaigns can be re-imported from any
 * machine (docs/operations.md, "Switching to PostgreSQL"). A campaign the database already holds
 * the same lines of is skipped, so a rerun does nothing; one it holds other lines of is refused
 * in one line (journaled in both places: moving it would mix two journals). Files are read,
 * never changed or removed.
 */
export async function importFileJournals(
  dataDir: string,
  database: Database,
  onMoved?: (move: JournalMove) => void,
): Promise<JournalMove[]> {
  const moves: JournalMove[] = [];
  for (const campaign of await journaledCampaigns(dataDir)) {
    const move = await importOne(dataDir, campaign, database);
    moves.push(move);
    onMoved?.(move);
  }
  return moves;
}

/** The campaigns of the data dir that have a journal file, by name. */
async function journaledCampaigns(dataDir: string): Promise<string[]> {
  const entries = await readdir(join(dataDir, "campaigns"), { withFileTypes: true }).catch(
    (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return [];
      throw error;
    },
  );
  const names: string[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    const index = await JournalIndex.load(journalPath(dataDir, entry.name), entry.name);
    if (index.lines > 0) names.push(entry.name);
  }
  return names.sort();
}

async function importOne(
  dataDir: string,
  campaign: string,
  database: Database,
): Promise<JournalMove> {
  const path = journalPath(dataDir, campaign);
  // Checked whole first (shapes, keys of this campaign): a damaged file moves nothing, and says
  // which line. Its count is the lines an import reads (a torn last line is not one, nor a void
  // line or one it takes back: the table has no void rows, so neither is moved).
  const index = await JournalIndex.load(path, campaign);
  const orders = index.lines;
  const tagged = await hasTagsMarker(dataDir, campaign);
  return inTransaction(database, async (client) => {
    await takeTransactionLock(
      client,
      database.schema,
      `journal-import:${campaign}`,
      `another giftjobs is moving the journal of campaign ${campaign} in: wait for it`,
    );
    const held = await heldJournal(client, campaign);
    if (held.orders > 0) {
      const file = await fileDigest(path, index);
      if (held.orders === orders && held.digest === file) {
        return { campaign, orders, outcome: "already" as const };
      }
      throw new UserError(
        `campaign ${campaign}: table ${database.schema}.order_journal holds ${held.orders} ${plural(held.orders, "order")} of it, not the ${orders} of ${path}: it was journaled in both places, so nothing of it is moved (keep the data dir for it; docs/operations.md, "Switching to PostgreSQL")`,
      );
    }
    // The marker first, as an import writes it before its first tagged order.
    if (tagged) {
      await client.query(
        "INSERT INTO order_tags_marker (campaign) VALUES ($1) ON CONFLICT (campaign) DO NOTHING",
        [campaign],
      );
    }
    for await (const page of linePages(path, index)) {
      await client.query(INSERT_JOURNAL_LINES, [campaign, JSON.stringify(page)]);
    }
    return { campaign, orders, outcome: "moved" as const };
  });
}

/** How many lines the database holds for the campaign, and a digest of their keys in order. */
async function heldJournal(
  client: pg.ClientBase,
  campaign: string,
): Promise<{ orders: number; digest: string | null }> {
  const { rows } = await client.query<{ orders: number; digest: string | null }>(
    `SELECT count(*)::int AS orders,
            encode(sha256(convert_to(string_agg(order_key, E'\\n' ORDER BY seq), 'UTF8')), 'hex') AS digest
       FROM order_journal WHERE campaign = $1`,
    [campaign],
  );
  return rows[0] ?? { orders: 0, digest: null };
}

/** The same digest of the keys of the file's lines an import reads (see linePages). */
async function fileDigest(path: string, index: JournalIndex): Promise<string> {
  const hash = createHash("sha256");
  let first = true;
  for await (const page of linePages(path, index)) {
    for (const line of page) {
      hash.update(first ? line.k : `\n${line.k}`);
      first = false;
    }
  }
  return hash.digest("hex");
}

/**
 * The lines of the file an import reads, parsed, a page at a time (JournalIndex.load checked
 * them): up to the last one it read, void lines and the lines they take back left out.
 */
async function* linePages(path: string, index: JournalIndex): AsyncGenerator<JournalLine[]> {
  let page: JournalLine[] = [];
  for await (const { lines, first } of readNumberedLineBatches(path)) {
    for (const [offset, text] of lines.entries()) {
      const number = first + offset;
      if (number > index.lastLine) break;
      if (index.leftOut(number)) continue;
      page.push(JSON.parse(text) as JournalLine);
      if (page.length === PAGE) {
        yield page;
        page = [];
      }
    }
  }
  if (page.length > 0) yield page;
}

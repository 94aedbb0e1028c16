import type { ExecutionMode } from "../api/order-request.js";
import { RunError } from "../errors/run-error.js";
import type { LedgerOrder, LedgerRow } from "../ledger/ledger.js";
import { type EncodedRecord, encodeRecord, type RecordFence } from "../ledger/record-argument.js";
import type { NewOrder } from "../ledger/types.js";
import type { JournalLine } from "../orders/journal.js";
import type { JournalIndex } from "../orders/journal-index.js";
import { orderKey } from "../orders/keys.js";
import type { PackedOrder } from "../orders/packing.js";
import { paidFingerprint } from "../orders/paid-fingerprint.js";
import type { NewPaidEntry } from "../orders/paid-memory.js";
import { orderOwnParts } from "../orders/request.js";
import type { SpoolEntry, SpooledRow } from "./row-spool.js";

/** An order whose rows are all read; `journal`: rebuilt from the journal, at its generation. */
interface ReadyOrder {
  rows: SpooledRow[];
  journal?: { generation: number; apiKey: string | undefined };
}

/** What pass 2 prepares its batches from besides the rows: the campaign and how it is recorded. */
interface PreparerInput {
  campaign: string;
  mode: ExecutionMode;
  /** The campaign's execution mode as stored, which its orders need not repeat (encodeRecord). */
  campaignMode: ExecutionMode | null;
  /** The orders carry the tags naming campaign and key (see campaignTagsOrders). */
  tagOrders: boolean;
  /** Rows released from a final failure: identity -> next generation. */
  released: ReadonlyMap<string, number>;
  /** With packing, the orders pass 1 packed (OrderPacker.orders); none with one row an order. */
  packed: readonly PackedOrder[] | undefined;
  /** The campaign's order journal as read at the start; none without one. */
  journal: JournalIndex | undefined;
  /** The API key the new orders are expected to be sent with, as its journal lines name it. */
  keyFingerprint: string | undefined;
  /** This import's fence in RECORD: its id (RecordFence); the batches are numbered here. */
  fenceId: string;
}

/**
 * Pass 2's batches as RECORD, the journal and the paid memory take them, from the spooled rows:
 * with one row an order each row is an order at once; with packing, or an order of the journal,
 * rows wait until every row of their order has been read. What it does is a function of its rows
 * and input alone: no Redis, no file (CampaignWriter writes and records what it prepares).
 */
export class BatchPreparer {
  /** identity -> index of its packed order; only with packing. */
  private readonly orderOf = new Map<string, number>();
  private readonly packed: readonly PackedOrder[];
  private readonly waiting = new Map<number, SpooledRow[]>();
  /** Rows of journal orders, by line, until each order is whole. */
  private readonly waitingJournal = new Map<number, SpooledRow[]>();
  private readonly campaign: string;
  private readonly mode: ExecutionMode;
  private readonly campaignMode: ExecutionMode | null;
  private readonly tagOrders: boolean;
  private readonly released: ReadonlyMap<string, number>;
  private readonly journal: JournalIndex | undefined;
  private readonly keyFingerprint: string | undefined;
  /** This import's fence in RECORD, and the number of the last batch prepared. */
  private readonly fence: RecordFence;

  constructor(input: PreparerInput) {
    this.campaign = input.campaign;
    this.mode = input.mode;
    this.campaignMode = input.campaignMode;
    this.tagOrders = input.tagOrders;
    this.released = input.released;
    this.journal = input.journal;
    this.keyFingerprint = input.keyFingerprint;
    this.fence = { id: input.fenceId, batch: 0 };
    this.packed = input.packed ?? [];
    for (const [index, order] of this.packed.entries())
      for (const identity of order.identities) this.orderOf.set(identity, index);
  }

  /**
   * A batch's rows as the orders now whole, ready for the journal and the paid memory
   * (`makeDurable`), then the ledger (`record`); undefined when no order is whole yet.
   */
  prepare(fresh: SpoolEntry[]): PreparedBatch | undefined {
    const orders = this.completeOrders(fresh);
    return orders.length > 0 ? this.place(orders) : undefined;
  }

  /** Holds rows until their order is whole; returns the orders now whole. */
  private completeOrders(fresh: SpooledRow[]): ReadyOrder[] {
    const ready: ReadyOrder[] = [];
    for (const planned of fresh) {
      const line = this.journalLineOf(planned);
      if (line !== undefined) {
        const index = this.journal!;
        const rows = gather(this.waitingJournal, line, planned, index.size(line));
        if (rows)
          ready.push({
            rows,
            journal: { generation: index.generation(line), apiKey: index.apiKey(line) },
          });
        continue;
      }
      if (this.packed.length === 0) {
        ready.push({ rows: [planned] });
        continue;
      }
      const index = this.orderOf.get(planned.identity);
      // Pass 1 packed exactly the rows it spooled: a row in no order would be lost silently.
      if (index === undefined) throw new Error(`${this.campaign}: a spooled row is in no order`);
      const rows = gather(this.waiting, index, planned, this.packed[index]!.identities.length);
      if (rows) ready.push({ rows });
    }
    return ready;
  }

  /** The journal order a new row is rebuilt in: one all of whose rows this import adds. */
  private journalLineOf(planned: SpooledRow): number | undefined {
    const index = this.journal;
    // A released row's order is the ledger's business: it moves to the next generation.
    if (!index || this.released.has(planned.identity)) return undefined;
    const line = index.lineOf(planned.identity);
    return line !== undefined && index.reproduces(line) ? line : undefined;
  }

  /** A journal line of a new order, naming the API key it is expected to be sent with. */
  private journalLine(g: number, k: string, i: string[]): JournalLine {
    const a = this.keyFingerprint;
    return a ? { g, k, i, a } : { g, k, i };
  }

  /** A new order's generation: its rows' highest, a row released from a final failure's next. */
  private generationOf(rows: readonly SpooledRow[]): number {
    let generation = 0;
    for (const p of rows) generation = Math.max(generation, this.released.get(p.identity) ?? 0);
    return generation;
  }

  /** Every order is whole once the spool is read (pass 1 packed exactly the rows it spooled). */
  finish(): void {
    // Pass 1 packed exactly the rows it spooled, so every order is whole by now.
    const left = this.waiting.size + this.waitingJournal.size;
    if (left > 0) throw new Error(`${this.campaign}: ${left} packed order(s) left incomplete`);
  }

  /**
   * The ledger's records of the orders, each to be put on the campaign's pending list by RECORD:
   * the dispatcher sends them from there (docs/architecture/campaigns.md, "Campaigns and the
   * dispatcher"); and the journal's lines of the new ones, the paid memory's of their rows.
   */
  private place(orders: ReadyOrder[]): PreparedBatch {
    const batch: NewOrder[] = [];
    const journalLines: JournalLine[] = [];
    const released: string[] = [];
    for (const ready of orders) {
      // Same rows, same body: the key hashes sorted identities, so the items follow that order too.
      const rows = ready.rows.length === 1 ? ready.rows : [...ready.rows].sort(byIdentity);
      for (const p of rows) if (this.released.has(p.identity)) released.push(p.identity);
      const generation = ready.journal?.generation ?? this.generationOf(rows);
      const identities = rows.map((p) => p.identity);
      const currency = rows[0]!.currency;
      if (rows.some((p) => p.currency !== currency))
        throw new RunError(
          `campaign ${this.campaign}: rows the journal recorded in one order now pay in different currencies (the catalog changed?); nothing more was recorded`,
        );
      const key = orderKey(this.campaign, generation, identities);
      // A journal order is in the journal already.
      if (!ready.journal) journalLines.push(this.journalLine(generation, key, identities));
      // The ledger keeps what the body is made of: the rows' items, and the order's own parts.
      const { description, metadata } = orderOwnParts(
        rows.map((p) => p.row),
        this.tagOrders ? { name: this.campaign, tagKey: key } : { name: this.campaign },
      );
      const order: LedgerOrder = {
        key,
        identities,
        generation,
        status: "queued",
        mode: this.mode,
        currency,
        face: sumUnits(rows, "face"),
        price: sumUnits(rows, "price"),
      };
      // Set only when present (no spread of a fresh object an order: an import makes one a row).
      if (description !== undefined) order.description = description;
      if (metadata !== undefined) order.metadata = metadata;
      // The packer groups rows by send_at: all of an order's rows share it.
      const sendAt = rows[0]!.row.send_at;
      if (sendAt !== undefined) order.send_at = sendAt;
      if (ready.journal) Object.assign(order, lostLedgerMark(ready.journal.apiKey));
      batch.push({ order, rows: rows.map((p) => [p.identity, ledgerRow(p, generation)]) });
    }
    // Encoded here, ahead: recording a batch waits for the one before it, encoding need not.
    this.fence.batch += 1;
    const encoded = encodeRecord(this.campaign, batch, this.campaignMode, { ...this.fence });
    return { encoded, journalLines, paid: paidEntries(orders), released };
  }
}

function byIdentity(a: SpooledRow, b: SpooledRow): number {
  return a.identity < b.identity ? -1 : a.identity > b.identity ? 1 : 0;
}

/**
 * The rows' face values or prices added up, in minor units. One row's as it is: pass 1 wrote it
 * as the digits of a bigint (String of its units), which no parse would change.
 */
function sumUnits(rows: readonly SpooledRow[], field: "face" | "price"): string {
  if (rows.length === 1) return rows[0]![field];
  let total = 0n;
  for (const p of rows) total += BigInt(p[field]);
  return String(total);
}

/** A batch of pass 2 between `prepare` and `record`. */
export interface PreparedBatch {
  /** The orders as RECORD takes them. */
  encoded: EncodedRecord;
  journalLines: JournalLine[];
  paid: NewPaidEntry[];
  /** Rows released from a final failure, taken out before their next generation is recorded. */
  released: string[];
}

/** The paid memory's entries of the orders' rows (a row naming nobody has none). */
function paidEntries(orders: readonly ReadyOrder[]): NewPaidEntry[] {
  const entries: NewPaidEntry[] = [];
  for (const { rows } of orders)
    for (const p of rows) {
      const fingerprint = p.fingerprint ?? paidFingerprint(p.row, p.currency);
      if (fingerprint === undefined) continue;
      const { identity, currency, face } = p;
      entries.push({ fingerprint, identity, line: p.row.line, currency, face });
    }
  return entries;
}

/**
 * An order rebuilt from the journal for rows the ledger did not know (a lost ledger): the lost
 * ledger may have sent it, so it starts with the mark of an unclear attempt, made with the API
 * key its journal line names (docs/architecture/keys-and-exactly-once.md, "One key while an order
 * may exist"). Sent with that key, the service replays what it made; with another, nothing is sent.
 */
function lostLedgerMark(
  apiKey: string | undefined,
): Partial<Pick<LedgerOrder, "unclear" | "unclear_api_key">> {
  return { unclear: "ledger_lost", ...(apiKey ? { unclear_api_key: apiKey } : {}) };
}

/** Adds a row to its order's waiting rows; returns them all once the order has `size`. */
function gather(
  waiting: Map<number, SpooledRow[]>,
  order: number,
  planned: SpooledRow,
  size: number,
): SpooledRow[] | undefined {
  const rows = waiting.get(order) ?? [];
  rows.push(planned);
  if (rows.length < size) {
    waiting.set(order, rows);
    return undefined;
  }
  waiting.delete(order);
  return rows;
}

/**
 * What the ledger keeps of a row: what its item is made of, and its report line.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function ledgerRow(p: SpooledRow, generation: number): Omit<LedgerRow, "order"> {
  const { row } = p;
  const stored: Omit<LedgerRow, "order"> = {
    line: row.line,
    generation,
    payload_hash: p.payload,
    email: row.email,
    product_code: row.product_code,
    face_value: row.face_value,
    currency: p.currency,
  };
  // Each only when present (an e-mail row of one product is stored as it always was), set
  // rather than spread: an import makes one a row.
  if (row.reference !== undefined) stored.reference = row.reference;
  if (row.template_id !== undefined) stored.template_id = row.template_id;
  if (row.distribution !== undefined) stored.distribution = row.distribution;
  if (row.recipient_reference !== undefined) stored.recipient_reference = row.recipient_reference;
  if (row.product_codes !== undefined) stored.product_codes = row.product_codes;
  if (row.selection_template_id !== undefined)
    stored.selection_template_id = row.selection_template_id;
  if (p.repeat_of !== undefined) stored.repeat_of = p.repeat_of;
  return stored;
}

import type { ExecutionMode } from "../api/order-request.js";
import type { JournalIndex, JournalVerdict } from "../orders/journal-index.js";
import type { OrderPacker } from "../orders/packing.js";
import { plural } from "../plural.js";
import type { RowSpool } from "./row-spool.js";

/**
 * Why an import must not go on, given what the journal says
 * (docs/architecture/keys-and-exactly-once.md, "Lost ledger"); undefined when it may. Rows recorded
 * in an order with rows this import does not have cannot be given that order's key again, and any
 * other key could pay them twice.
 */
export function journalRefusal(
  verdict: JournalVerdict,
  { mode, campaign, path }: { mode: ExecutionMode; campaign: string; path: string },
): string | undefined {
  const { incomplete } = verdict;
  if (incomplete.rows > 0)
    return `${incomplete.rows} ${plural(incomplete.rows, "row")} of this file ${plural(incomplete.rows, "was", "were")} recorded in ${incomplete.orders} ${plural(incomplete.orders, "order")} of campaign ${campaign} (${path}) together with ${incomplete.missing} ${plural(incomplete.missing, "row")} this import does not have (left out of the file, invalid, or changed): their orders' keys need every row, and another key could pay them twice; import the file they came from whole; nothing was enqueued`;
  if (mode === "sync" && verdict.largest > 1)
    return `rows of this file were recorded in orders of up to ${verdict.largest} items of campaign ${campaign} (${path}), and a sync order holds one: import them with --execution-mode async; nothing was enqueued`;
  return undefined;
}

/** The line an operator reads when rows the ledger does not know are found in the journal. */
export function journalWarning(
  verdict: JournalVerdict,
  campaign: string,
  path: string,
): string | undefined {
  if (verdict.reproduced === 0) return undefined;
  return `campaign ${campaign}: ${verdict.reproduced} ${plural(verdict.reproduced, "row")} of this file ${plural(verdict.reproduced, "was", "were")} recorded before (${path}) but the ledger does not know them (Redis lost or flushed, or an import stopped half way): they are recorded again in the same ${verdict.orders} ${plural(verdict.orders, "order")}, under the same keys, so the service answers what it answered then`;
}

/**
 * Pass 1 keeps rows the journal names out of the packer. Those whose journal order cannot be
 * rebuilt because the ledger knows others of its rows (that order was recorded, and these rows
 * were released from it, or it was left out for another import's) are packed anew: this reads
 * the spool once more to add them, only when there are any.
 */
export async function repackFromSpool(
  spool: RowSpool,
  {
    journal,
    released,
    packer,
  }: { journal: JournalIndex; released: ReadonlyMap<string, number>; packer: OrderPacker },
): Promise<void> {
  if (journal.verdict().repacked === 0) return;
  for await (const entries of spool.read()) {
    for (const entry of entries) {
      if (released.has(entry.identity)) continue;
      const line = journal.lineOf(entry.identity);
      if (line !== undefined && !journal.reproduces(line))
        packer.add(entry.identity, entry.currency);
    }
  }
}

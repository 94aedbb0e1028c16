import { randomUUID } from "node:crypto";
import type { ExecutionMode } from "../api/order-request.js";
import type { JournalIndex } from "../orders/journal-index.js";
import type { JournalAppender } from "../orders/journal-store.js";
import type { OrderPacker } from "../orders/packing.js";
import type { PaidAppender } from "../orders/paid-memory.js";
import { BatchPreparer, type PreparedBatch } from "./batch-preparer.js";
import type { Survey } from "./import-survey.js";
import type { ImportDeps } from "./import-types.js";
import type { Sending } from "./recording-pipeline.js";
import type { SpoolEntry } from "./row-spool.js";

export type { PreparedBatch };

/**
 * The journal as pass 2 uses it: the index read at the start, and where new orders go; and
 * where the paid memory takes the new rows (docs/architecture/repeats.md).
 */
export interface WriterJournal {
  index: JournalIndex | undefined;
  writer: JournalAppender | undefined;
  paid?: PaidAppender;
}

/**
 * Records pass 2's batches: each made durable in the journal and the paid memory, then sent to
 * RECORD; counts what RECORD added. Its BatchPreparer makes the batches (`prepare`).
 */
export class CampaignWriter {
  rows = 0;
  orders = 0;
  /** Rows another import recorded between pass 1 and this one (see RECORD): not added here. */
  leftOut = 0;
  private readonly preparer: BatchPreparer;
  /** This import's fence in RECORD (RecordFence): the preparer numbers its batches. */
  private readonly fenceId = randomUUID();
  /** Batches sent to RECORD under the fence. */
  private sentBatches = 0;

  private readonly campaign: string;
  private readonly journal: WriterJournal;

  constructor(
    private readonly deps: ImportDeps,
    written: {
      campaign: string;
      survey: Survey;
      mode: ExecutionMode;
      packer: OrderPacker | undefined;
      journal?: WriterJournal;
      tagOrders?: boolean;
      /** Read once: a campaign's mode never changes once registered (before pass 2). */
      campaignMode: ExecutionMode | null;
    },
  ) {
    this.campaign = written.campaign;
    this.journal = written.journal ?? { index: undefined, writer: undefined };
    this.preparer = new BatchPreparer({
      campaign: written.campaign,
      mode: written.mode,
      campaignMode: written.campaignMode,
      tagOrders: written.tagOrders ?? false,
      released: written.survey.released,
      packed: written.packer ? [...written.packer.orders()] : undefined,
      journal: this.journal.index,
      keyFingerprint: deps.client?.keyFingerprint,
      fenceId: this.fenceId,
    });
  }

  /**
   * A batch's rows as the orders now whole, ready for the journal and the paid memory
   * (`makeDurable`), then the ledger (`record`); undefined when no order is whole yet.
   */
  prepare(fresh: SpoolEntry[]): PreparedBatch | undefined {
    return this.preparer.prepare(fresh);
  }

  /** Throws unless every order is whole (BatchPreparer.finish). */
  finish(): void {
    this.preparer.finish();
  }

  /**
   * The batch's new orders appended to the journal and its rows to the paid memory, both
   * flushed: durable before Redis hears of them, so that an order the ledger holds is always
   * in the journal, and its rows in the paid memory (docs/architecture/keys-and-exactly-once.md,
   * "Lost ledger").
   */
  async makeDurable({ journalLines, paid }: PreparedBatch): Promise<void> {
    await Promise.all([this.journal.writer?.append(journalLines), this.journal.paid?.append(paid)]);
  }

  /**
   * Sends the batch's orders, made durable before, to RECORD, which puts each on the pending
   * list; `recorded` settles with its answer. Sent at once, before the batch before it has
   * answered (RecordingPipeline): RECORD's fence refuses it unless that one was recorded. A batch
   * that releases rows first waits for that answer (`before`): a release is not fenced.
   */
  record(batch: PreparedBatch, before: Promise<void>): Sending {
    this.sentBatches += 1;
    if (batch.released.length === 0) return { sent: Promise.resolve(), recorded: this.send(batch) };
    let sent = () => {};
    const sending = new Promise<void>((resolve) => {
      sent = resolve;
    });
    const recorded = (async () => {
      try {
        await before;
        for (const identity of batch.released)
          await this.deps.ledger.orders.releaseRow(this.campaign, identity);
      } finally {
        // Sent below, in this same turn; or not at all: the next batch then finds the fence shut.
        sent();
      }
      return this.send(batch);
    })();
    return { sent: sending, recorded };
  }

  private async send({ encoded }: PreparedBatch): Promise<void> {
    const recorded = await this.deps.ledger.orders.recordEncoded(encoded);
    this.rows += recorded.added;
    this.orders += recorded.orders;
    this.leftOut += recorded.leftOut;
  }

  /** Takes RECORD's fence away once every batch is answered (else it expires within the hour). */
  async removeFence(): Promise<void> {
    if (this.sentBatches > 0)
      await this.deps.ledger.orders.removeFence(this.campaign, this.fenceId);
  }
}

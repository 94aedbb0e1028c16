/**
 * Pass 2's two steps a batch, overlapped (docs/architecture/import.md, "Pass 2 in step"): a
 * batch's lines are written to the journal and the paid memory, and flushed, while Redis records
 * the batch before it, and the reader prepares the next meanwhile. What exactly-once needs is
 * kept: a batch is recorded only once its own lines are durable and the batch before it is
 * recorded, and lines are appended in the order of their batches. Once a step fails, no batch
 * after it is written or recorded, and the failure surfaces at the next `add` or at `drain`.
 * At most two batches are in flight (one being made durable, one being recorded): memory does
 * not grow with the file.
 */
export class RecordingPipeline<T> {
  private durable: Promise<void> = Promise.resolve();
  private recorded: Promise<void> = Promise.resolve();
  /** The batch before the last one, recorded: the reader waits for it before it adds one more. */
  private recordedBefore: Promise<void> = Promise.resolve();
  private failed = false;

  constructor(
    private readonly makeDurable: (batch: T) => Promise<void>,
    private readonly record: (batch: T) => Promise<void>,
  ) {}

  async add(batch: T): Promise<void> {
    await this.recordedBefore.catch(() => {});
    if (this.failed) return this.drain();
    const durable = this.durable.then(() => (this.failed ? undefined : this.makeDurable(batch)));
    // Settles after every batch before it, failing with the first failure in their order.
    const recorded = Promise.allSettled([this.recorded, durable]).then(([before, own]) => {
      if (before.status === "rejected") throw before.reason;
      if (own.status === "rejected") throw own.reason;
      return this.record(batch);
    });
    // A failure stops the later batches' writes; it is kept for `add` or `drain` to throw, the
    // catches only stop an "unhandled rejection" meanwhile.
    const stop = () => {
      this.failed = true;
    };
    durable.catch(stop);
    recorded.catch(stop);
    this.recordedBefore = this.recorded;
    this.durable = durable.catch(() => {});
    this.recorded = recorded;
  }

  /** Waits until every batch added is recorded, or has failed: throws the first failure. */
  drain(): Promise<void> {
    return this.recorded;
  }
}

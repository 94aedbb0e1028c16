/** What `record` returns: when the batch's record was sent, and when it was answered. */
export interface Sending {
  /** Settles once the record is sent: the next batch's may be sent after it. */
  sent: Promise<void>;
  /** Settles once the record is answered: recorded, or refused. */
  recorded: Promise<void>;
}

/**
 * Pass 2's two steps a batch, overlapped (docs/architecture/import.md, "Pass 2 in step"): a
 * batch's lines are written to the journal and the paid memory, and flushed, while Redis records
 * the batch before it, and the reader prepares the next meanwhile. A batch's record is sent as
 * soon as its own lines are durable and the batch before it was sent, without waiting for that
 * one's answer, so that Redis goes from one batch to the next without waiting on this process:
 * the store refuses a batch whose predecessor was not recorded (RECORD's fence), so no batch is
 * recorded after one that failed. Lines are appended in the order of their batches. Once a step
 * fails, no batch after it is written or sent, and the failure surfaces at the next `add` or at
 * `drain`. At most IN_FLIGHT batches are in flight (added and not yet recorded): memory does
 * not grow with the file.
 */
/**
 * Three rather than two: with two, Redis and the main thread each waited on the other by turns
 * (at a million rows the repeat took 29.6-32.8 s with three, 33.4-35.9 s with two, the first
 * import 23.0-24.7 s and 22.6-25.3 s; three interleaved rounds each, peak RSS alike).
 */
const IN_FLIGHT = 3;

export class RecordingPipeline<T> {
  private durable: Promise<void> = Promise.resolve();
  private sent: Promise<void> = Promise.resolve();
  private recorded: Promise<void> = Promise.resolve();
  /** The batches in flight, recorded: the reader waits for the oldest before it adds one more. */
  private readonly inFlight: Promise<void>[] = [];
  private failed = false;

  constructor(
    private readonly makeDurable: (batch: T) => Promise<void>,
    /**
     * Sends the batch's record; called in the batches' order, each once its lines are durable and
     * the batch before it was sent. `before` settles when the batch before it is recorded (or
     * refused), for a batch that must wait for it.
     */
    private readonly record: (batch: T, before: Promise<void>) => Sending,
    /** Batches in flight at most: added and not yet recorded. */
    private readonly depth = IN_FLIGHT,
  ) {}

  async add(batch: T): Promise<void> {
    if (this.inFlight.length >= this.depth) await this.inFlight.shift()!.catch(() => {});
    if (this.failed) return this.drain();
    const before = this.recorded;
    const durable = this.durable.then(() => (this.failed ? undefined : this.makeDurable(batch)));
    const sending = Promise.all([this.sent, durable]).then(() => {
      // A failure known by now stops the send; one not yet known is the fence's to stop.
      if (this.failed) throw new Error("an earlier batch failed");
      return this.record(batch, before);
    });
    const sent = sending.then((s) => s.sent);
    // Settles after every batch before it, failing with the first failure in their order.
    const recorded = Promise.allSettled([before, sending.then((s) => s.recorded)]).then(
      ([earlier, own]) => {
        if (earlier.status === "rejected") throw earlier.reason;
        if (own.status === "rejected") throw own.reason;
      },
    );
    // A failure stops the later batches' writes; it is kept for `add` or `drain` to throw, the
    // catches only stop an "unhandled rejection" meanwhile.
    const stop = () => {
      this.failed = true;
    };
    durable.catch(stop);
    sent.catch(stop);
    recorded.catch(stop);
    this.inFlight.push(recorded);
    this.durable = durable.catch(() => {});
    this.sent = sent;
    this.recorded = recorded;
  }

  /** Waits until every batch added is recorded, or has failed: throws the first failure. */
  drain(): Promise<void> {
    return this.recorded;
  }
}

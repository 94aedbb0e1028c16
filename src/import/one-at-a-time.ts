/**
 * Runs async steps one at a time, in order, while the caller goes on: the next batch is parsed
 * and validated while Redis answers for the previous one. `run` waits for the step before, so
 * at most one is in flight; a failure surfaces at the next `run` or at `drain`.
 */
export class OneAtATime {
  private last: Promise<void> = Promise.resolve();
  async run(step: () => Promise<void>): Promise<void> {
    await this.last;
    const next = step();
    // Kept for the next run or drain; the catch only stops an "unhandled rejection" meanwhile.
    next.catch(() => {});
    this.last = next;
  }
  drain(): Promise<void> {
    return this.last;
  }
}

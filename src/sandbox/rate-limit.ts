const WINDOW_MS = 60_000;

/** Sliding 60-second window over request times: at most `limit` requests in any minute. */
export class SlidingWindow {
  private times: number[] = [];
  private head = 0;

  constructor(public limit: number) {}

  /** Counts a request; false when it is over the limit (it still counts: failed ones do). */
  hit(now = Date.now()): boolean {
    while (this.head < this.times.length && (this.times[this.head] as number) <= now - WINDOW_MS) {
      this.head++;
    }
    // Compact now and then so the array does not grow without end.
    if (this.head > 1024 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.head = 0;
    }
    const allowed = this.times.length - this.head < this.limit;
    if (allowed) this.times.push(now);
    return allowed;
  }

  reset(): void {
    this.times = [];
    this.head = 0;
  }
}

// What happened during one soak sequence, in time order: the plan's events, what the harness
// did, and every POST /v2/order as the sandbox saw it end. Printed with a failing seed.
import type { OrderAttempt } from "../../src/sandbox/index.js";

export class Trace {
  private readonly start = Date.now();
  readonly lines: string[] = [];
  /** Every POST /v2/order the sandbox saw end, in order. */
  readonly attempts: OrderAttempt[] = [];
  private readonly labels = new Map<string, string>();

  /** A short stable name for an idempotency key: K1, K2, ... in the order first seen. */
  label(key: string | undefined): string {
    if (!key) return "(no key)";
    let label = this.labels.get(key);
    if (!label) {
      label = `K${this.labels.size + 1}`;
      this.labels.set(key, label);
    }
    return label;
  }

  note(text: string): void {
    this.lines.push(`+${String(Date.now() - this.start).padStart(5)}ms ${text}`);
  }

  /** SandboxOptions.onOrderAttempt: one line per POST /v2/order. */
  readonly attempt = (attempt: OrderAttempt): void => {
    this.attempts.push(attempt);
    const type = attempt.errorType ? ` ${attempt.errorType}` : "";
    const replayed = attempt.replayed ? " (replayed)" : "";
    this.note(
      `  POST ${this.label(attempt.idempotencyKey)} -> ${attempt.status}${type}${replayed}`,
    );
  };
}

import type { Random } from "./prng.js";

/**
 * How often a webhook fault fires: below 1 a probability per message (0.2: one in five), a
 * whole number from 1 a count (3: the next three messages). 0 never.
 */
export type FaultAmount = number;

/** Faults of the sandbox's webhook deliveries (POST /_sandbox/webhooks/faults changes them). */
export interface WebhookFaults {
  /** Messages delivered twice, under the same webhook-id. */
  duplicates: FaultAmount;
  /** Messages held back until the next message has been sent (1 s at most). */
  outOfOrder: FaultAmount;
  /** Messages never sent (the receiver has to be saved by polling). */
  drop: FaultAmount;
  /** Delay before each message's first attempt, ms. */
  delayMs: number;
}

export const NO_WEBHOOK_FAULTS: WebhookFaults = {
  duplicates: 0,
  outOfOrder: 0,
  drop: 0,
  delayMs: 0,
};

const JSON_NAMES: Record<string, keyof WebhookFaults> = {
  duplicates: "duplicates",
  out_of_order: "outOfOrder",
  outOfOrder: "outOfOrder",
  drop: "drop",
  delay_ms: "delayMs",
  delayMs: "delayMs",
};

/** A fault amount as given (flag or JSON); a RangeError names `name` when it is neither form. */
export function faultAmount(name: string, value: unknown): FaultAmount {
  const n = typeof value === "string" && /^\d*\.?\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== "number" || !(n >= 0) || (n >= 1 && !Number.isInteger(n))) {
    throw new RangeError(
      `${name} must be a probability below 1 (e.g. 0.2) or a whole count (e.g. 3) (got ${String(value)})`,
    );
  }
  return n;
}

/** Validates a partial update of the webhook faults; a RangeError names the field. */
export function parseWebhookFaults(input: Record<string, unknown>): Partial<WebhookFaults> {
  const out: Partial<WebhookFaults> = {};
  for (const [raw, value] of Object.entries(input)) {
    if (value === undefined) continue;
    const name = JSON_NAMES[raw];
    if (!name) throw new RangeError(`unknown webhook fault ${raw}`);
    if (name === "delayMs") {
      if (typeof value !== "number" || !Number.isInteger(value) || value < 0)
        throw new RangeError(`${raw} must be a whole number >= 0`);
      out.delayMs = value;
    } else out[name] = faultAmount(raw, value);
  }
  return out;
}

/** Counts left of the count-form faults, and the draws of the probability ones. */
export class WebhookFaultDice {
  private left = new Map<keyof WebhookFaults, number>();

  constructor(
    readonly faults: WebhookFaults,
    private readonly random: Random,
  ) {
    this.rearm();
  }

  /** Re-reads the counts of `names` (those just set; the others keep what is left of theirs). */
  rearm(names: readonly string[] = ["duplicates", "outOfOrder", "drop"]): void {
    for (const name of ["duplicates", "outOfOrder", "drop"] as const) {
      if (!names.includes(name)) continue;
      this.left.set(name, this.faults[name] >= 1 ? this.faults[name] : 0);
    }
  }

  fires(name: "duplicates" | "outOfOrder" | "drop"): boolean {
    const amount = this.faults[name];
    if (amount <= 0) return false;
    if (amount < 1) return this.random() < amount;
    const left = this.left.get(name) ?? 0;
    if (left <= 0) return false;
    this.left.set(name, left - 1);
    return true;
  }
}

import { createHmac, randomBytes } from "node:crypto";
import { setMaxListeners } from "node:events";
import { Agent, request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { mulberry32 } from "./prng.js";
import { NO_WEBHOOK_FAULTS, WebhookFaultDice, type WebhookFaults } from "./webhook-faults.js";

/** The service's webhook message types (openapi `webhooks`). */
export type WebhookType = "order.completion" | "product.update";

export interface WebhookSenderOptions {
  /** Where messages are POSTed. */
  url: string;
  /** `whsec_` + the base64 key, as the service shows it. */
  secret: string;
  faults?: Partial<WebhookFaults>;
  /** Attempts per message in all (first one included). @defaultValue 5 */
  attempts?: number;
  /** Wait before the first retry; it doubles each retry. @defaultValue 1000 */
  retryBaseMs?: number;
  /** Per-attempt timeout. @defaultValue 5000 */
  timeoutMs?: number;
  /** Seed of the fault draws. @defaultValue 1 */
  seed?: number;
}

/** What the sender did, for GET /_sandbox/stats. */
export interface WebhookStats {
  /** Messages made (a dropped one included). */
  messages: number;
  /** Attempts answered 2xx (a duplicate's second delivery included). */
  delivered: number;
  /** Attempts answered non-2xx or not answered (each retry counts). */
  failed: number;
  /** Messages given up after their last attempt. */
  gave_up: number;
  dropped: number;
  duplicated: number;
  reordered: number;
  by_type: Record<string, number>;
}

interface Message {
  id: string;
  type: WebhookType;
  body: string;
}

function emptyStats(): WebhookStats {
  return {
    messages: 0,
    delivered: 0,
    failed: 0,
    gave_up: 0,
    dropped: 0,
    duplicated: 0,
    reordered: 0,
    by_type: {},
  };
}

/** The key a `whsec_...` secret stands for; a RangeError when it is not one. */
export function webhookKey(secret: string): Buffer {
  const match = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(secret);
  if (!match) throw new RangeError("webhook secret must be whsec_ followed by base64");
  return Buffer.from(match[1] as string, "base64");
}

/**
 * The signature Svix sends (the Standard Webhooks scheme): `v1,` + base64 HMAC-SHA256 of
 * `${id}.${timestamp}.${body}`. Written here from the spec rather than with the receiver's
 * library, so the two check each other.
 */
function signWebhook(key: Buffer, id: string, timestamp: number, body: string): string {
  const mac = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64");
  return `v1,${mac}`;
}

/**
 * Sends the sandbox's webhooks, like the service through Svix: signed (`svix-id`,
 * `svix-timestamp`, `svix-signature`), retried with a doubling backoff on non-2xx or no answer,
 * and with faults on demand: duplicates, out-of-order delivery, delays, drops.
 */
export class WebhookSender {
  stats: WebhookStats = emptyStats();
  readonly faults: WebhookFaults;
  private readonly key: Buffer;
  private readonly dice: WebhookFaultDice;
  private readonly pending = new Set<Promise<void>>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private held: Message[] = [];
  private heldTimer: NodeJS.Timeout | undefined;
  private readonly abort = new AbortController();
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 50 });
  private closed = false;

  constructor(private readonly options: WebhookSenderOptions) {
    this.key = webhookKey(options.secret);
    this.faults = { ...NO_WEBHOOK_FAULTS, ...options.faults };
    this.dice = new WebhookFaultDice(this.faults, mulberry32(options.seed ?? 1));
    // Every message waiting or in flight listens to this one signal (close() stops them all):
    // hundreds at once under load are expected, not a leak.
    setMaxListeners(0, this.abort.signal);
  }

  resetStats(): void {
    this.stats = emptyStats();
  }

  setFaults(update: Partial<WebhookFaults>): WebhookFaults {
    Object.assign(this.faults, update);
    this.dice.rearm(Object.keys(update));
    return this.faults;
  }

  /** Queues a message; it is sent in the background (see faults). */
  send(type: WebhookType, data: unknown): void {
    if (this.closed) return;
    const message = {
      id: `msg_${randomBytes(12).toString("base64url")}`,
      type,
      body: JSON.stringify(data),
    };
    this.stats.messages += 1;
    this.stats.by_type[type] = (this.stats.by_type[type] ?? 0) + 1;
    if (this.dice.fires("drop")) {
      this.stats.dropped += 1;
      return;
    }
    if (this.dice.fires("outOfOrder")) {
      this.stats.reordered += 1;
      this.held.push(message);
      // A held message goes after the next one, or after a second if none comes.
      this.heldTimer ??= this.later(1000, () => this.releaseHeld());
      return;
    }
    const delivery = this.dispatch(message);
    // The held ones go once this one has arrived, so they really arrive after it.
    if (this.held.length > 0) void delivery.finally(() => this.releaseHeld());
  }

  /** Resolves when every message made so far is delivered or given up. */
  async idle(): Promise<void> {
    while (this.pending.size > 0 || this.held.length > 0) {
      if (this.pending.size > 0) await Promise.allSettled([...this.pending]);
      else await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Stops: nothing more is sent, attempts in flight are cancelled. */
  async close(): Promise<void> {
    this.closed = true;
    this.abort.abort();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.held = [];
    await Promise.allSettled([...this.pending]);
    this.agent.destroy();
  }

  private releaseHeld(): void {
    if (this.heldTimer) {
      clearTimeout(this.heldTimer);
      this.timers.delete(this.heldTimer);
      this.heldTimer = undefined;
    }
    const held = this.held;
    this.held = [];
    for (const message of held) this.dispatch(message);
  }

  private dispatch(message: Message): Promise<void> {
    const delivery = this.track(this.deliver(message, this.faults.delayMs));
    if (this.dice.fires("duplicates")) {
      this.stats.duplicated += 1;
      this.track(this.deliver(message, this.faults.delayMs + 5));
    }
    return delivery;
  }

  private track(delivery: Promise<void>): Promise<void> {
    this.pending.add(delivery);
    void delivery.finally(() => this.pending.delete(delivery));
    return delivery;
  }

  private later(ms: number, fn: () => void): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
    return timer;
  }

  private wait(ms: number): Promise<boolean> {
    if (ms <= 0) return Promise.resolve(!this.closed);
    // close() clears the timers; a wait it cut short resolves false at once.
    return new Promise((resolve) => {
      const onAbort = () => resolve(false);
      this.abort.signal.addEventListener("abort", onAbort, { once: true });
      this.later(ms, () => {
        this.abort.signal.removeEventListener("abort", onAbort);
        resolve(!this.closed);
      });
    });
  }

  private async deliver(message: Message, delayMs: number): Promise<void> {
    if (!(await this.wait(delayMs))) return;
    const attempts = this.options.attempts ?? 5;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (this.closed) return;
      if (await this.attempt(message)) {
        this.stats.delivered += 1;
        return;
      }
      this.stats.failed += 1;
      if (attempt === attempts) break;
      const backoff = (this.options.retryBaseMs ?? 1000) * 2 ** (attempt - 1);
      if (!(await this.wait(backoff))) return;
    }
    this.stats.gave_up += 1;
  }

  /** One POST, signed at the time it leaves (a retry carries a fresh timestamp, same id). */
  private attempt(message: Message): Promise<boolean> {
    const timestamp = Math.floor(Date.now() / 1000);
    const url = new URL(this.options.url);
    // node:http with a keep-alive agent, not fetch: the sandbox's own CPU is what benches share.
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    return new Promise((resolve) => {
      const req = send(
        url,
        {
          method: "POST",
          agent: url.protocol === "https:" ? undefined : this.agent,
          timeout: this.options.timeoutMs ?? 5000,
          signal: this.abort.signal,
          headers: {
            "content-type": "application/json",
            "content-length": Buffer.byteLength(message.body),
            "svix-id": message.id,
            "svix-timestamp": String(timestamp),
            "svix-signature": signWebhook(this.key, message.id, timestamp, message.body),
          },
        },
        (res) => {
          res.resume();
          res.on("end", () => resolve((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300));
          res.on("error", () => resolve(false));
        },
      );
      req.on("timeout", () => req.destroy());
      req.on("error", () => resolve(false));
      req.end(message.body);
    });
  }
}

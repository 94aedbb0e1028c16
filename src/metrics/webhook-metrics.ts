import { Counter, type Registry } from "prom-client";
import {
  WEBHOOK_RESULTS,
  WEBHOOK_TYPES,
  type WebhookMessageType,
  type WebhookResult,
} from "../webhooks/webhook-result.js";

/**
 * `giftjobs_webhook_messages_total{type, result}`: every request the webhook receiver answered,
 * by message type and what it did (docs/architecture/webhooks.md, "Webhooks"). Every series exists
 * (at 0) from the first scrape.
 */
export class WebhookMetrics {
  private readonly messages: Counter<"type" | "result">;

  constructor(registry: Registry) {
    this.messages = new Counter({
      name: "giftjobs_webhook_messages_total",
      help: "Webhook requests answered by the receiver, by message type and result",
      labelNames: ["type", "result"],
      registers: [registry],
    });
    for (const type of WEBHOOK_TYPES)
      for (const result of WEBHOOK_RESULTS) this.messages.inc({ type, result }, 0);
  }

  /** The receiver's onMessage hook. */
  readonly onMessage = (type: WebhookMessageType, result: WebhookResult): void => {
    this.messages.inc({ type, result });
  };
}

// A bare HTTP endpoint that records the webhooks a sandbox sends (the sandbox's own tests).
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedWebhook {
  /** `svix-id`, `svix-timestamp` and `svix-signature`: the headers the service sends. */
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read message bodies freely.
  json: any;
  /** Every header as received. */
  headers: Record<string, string | string[] | undefined>;
}

export interface WebhookInbox {
  url: string;
  /** Every request received, failed ones included, in arrival order. */
  received: ReceivedWebhook[];
  /** The status to answer each request with (default 200). */
  answer: (message: ReceivedWebhook) => number;
  close(): Promise<void>;
}

/** A webhook endpoint on a free loopback port. */
export async function startWebhookInbox(): Promise<WebhookInbox> {
  const inbox: WebhookInbox = {
    url: "",
    received: [],
    answer: () => 200,
    close: async () => undefined,
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const message = {
        id: String(req.headers["svix-id"]),
        timestamp: String(req.headers["svix-timestamp"]),
        signature: String(req.headers["svix-signature"]),
        body,
        json: JSON.parse(body),
        headers: req.headers,
      };
      inbox.received.push(message);
      res.statusCode = inbox.answer(message);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  inbox.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  inbox.close = () =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return inbox;
}

/** A fresh Standard Webhooks secret: `whsec_` + 24 random bytes in base64. */
export function newWebhookSecret(): string {
  const bytes = Buffer.alloc(24);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(Math.random() * 256);
  return `whsec_${bytes.toString("base64")}`;
}

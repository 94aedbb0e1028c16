import type { IncomingMessage, ServerResponse } from "node:http";
import { errorTypeOf, header } from "./http-util.js";

/**
 * One POST /v2/order as the sandbox saw it end (`SandboxOptions.onOrderAttempt`).
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export interface OrderAttempt {
  /** When it ended, epoch ms. */
  at: number;
  /** Its X-Idempotency-Key, when it had one. */
  idempotencyKey: string | undefined;
  /**
   * The HTTP status answered; `dropped`: the connection was cut on purpose after the order was
   * made (fault dropRate); `gone`: the client left before the answer (its timeout, say).
   */
  status: number | "dropped" | "gone";
  /** The `type` of an error answer (`rate_limited` for a 429). */
  errorType?: string;
  /** The answer was the key's recorded one, replayed. */
  replayed: boolean;
}

export type OrderAttemptListener = (attempt: OrderAttempt) => void;

/**
 * Tells `listener` once how the request ended: answered ("finish"), cut on purpose (the
 * returned `dropped`, called before the socket is destroyed) or left by the client ("close"
 * alone). Whatever the listener throws is ignored: it only watches.
 */
export function watchOrderAttempt(
  req: IncomingMessage,
  res: ServerResponse,
  listener: OrderAttemptListener,
): () => void {
  let told = false;
  const tell = (status: OrderAttempt["status"]) => {
    if (told) return;
    told = true;
    const attempt: OrderAttempt = {
      at: Date.now(),
      idempotencyKey: header(req, "x-idempotency-key"),
      status,
      replayed: res.getHeader("X-Sandbox-Replayed") === "true",
    };
    const type = typeof status === "number" && status >= 400 ? errorTypeOf(res) : undefined;
    if (type !== undefined) attempt.errorType = type;
    try {
      listener(attempt);
    } catch {
      // A watcher's failure is not the request's.
    }
  };
  res.once("finish", () => tell(res.statusCode));
  res.once("close", () => tell("gone"));
  return () => tell("dropped");
}

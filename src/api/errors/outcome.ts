/**
 * What a worker does with an outcome (docs/architecture/sending-orders.md, "Outcomes"):
 * - `retry-same-key`: nothing is known to have failed for good; an order may exist. Retry with the SAME key.
 * - `rate-limited`: 429; wait (at least 5 s, longer when it repeats) and send again.
 * - `systemic`: the account cannot order now (401/403, insufficient_funds, ordering_restricted); pause.
 * - `final`: a 4xx that guarantees no order was made; the row fails, a new generation may retry it.
 * - `key-conflict`: the key was used with another body; never retried.
 */
export type Outcome = "retry-same-key" | "rate-limited" | "systemic" | "final" | "key-conflict";

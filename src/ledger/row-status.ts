/**
 * Status of a row (and of the order that carries it). Every row ends in exactly one of
 * completed, failed_final (no order was made), failed_uncertain (an order may exist) or
 * cancelled (its campaign was cancelled before anything was sent for it).
 */
export const ROW_STATUSES = [
  "queued",
  "in_flight",
  "submitted",
  "completed",
  "failed_final",
  "failed_uncertain",
  "cancelled",
] as const;

export type RowStatus = (typeof ROW_STATUSES)[number];

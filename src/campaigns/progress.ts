import { type CampaignStatus, pendingRows } from "./status.js";

/** Progress of a campaign as an operator reads it: the worker's log lines, `status --wait`. */

/** Rows at an end: completed, failed or cancelled. */
export function doneRows(status: CampaignStatus): number {
  return status.total - pendingRows(status);
}

/** `12m 5s`, `1h 3m`, `40s`. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "?";
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

/** Rate (rows a second) and ETA (seconds) from rows done since `since`. */
export function rateAndEta(
  doneSince: number,
  elapsedMs: number,
  remaining: number,
): { rate: number; etaSeconds: number } {
  const rate = elapsedMs > 0 ? (doneSince * 1000) / elapsedMs : 0;
  return { rate, etaSeconds: rate > 0 ? remaining / rate : Number.POSITIVE_INFINITY };
}

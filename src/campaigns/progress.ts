import { grouped } from "../grouped.js";
import { type CampaignStatus, pendingRows } from "./status.js";

/** Progress of a campaign as an operator reads it: the worker's log lines, `status --wait`. */

/** Rows at an end: completed, failed or cancelled (docs/concepts.md, "Done"). */
export function doneRows(status: CampaignStatus): number {
  return status.total - pendingRows(status);
}

/**
 * A campaign's rows as every view shows them (docs/concepts.md, "Done"): `done` is the rows at
 * an end, and its three parts are shown apart, so that a cancelled campaign does not read as
 * complete. `failed` is failed_final + failed_uncertain; `pending` the rows not done yet.
 */
export interface RowProgress {
  total: number;
  done: number;
  completed: number;
  failed: number;
  cancelled: number;
  pending: number;
}

export function rowProgress(status: CampaignStatus): RowProgress {
  return {
    total: status.total,
    done: doneRows(status),
    completed: status.completed,
    failed: status.failed_final + status.failed_uncertain,
    cancelled: status.cancelled,
    pending: pendingRows(status),
  };
}

/** `300 of 300 rows done: 91 completed, 0 failed, 209 cancelled`. */
export function doneText(p: RowProgress): string {
  return (
    `${grouped(p.done)} of ${grouped(p.total)} rows done: ${grouped(p.completed)} completed, ` +
    `${grouped(p.failed)} failed, ${grouped(p.cancelled)} cancelled`
  );
}

/** The cells of a bar: completed, failed, cancelled, then not done yet. */
const BAR_CELLS = { completed: "█", failed: "x", cancelled: "-", pending: "░" } as const;

/**
 * A bar of `width` cells with each part apart (BAR_CELLS): a part that is not 0 gets at least a
 * cell, and the completed part fills the bar only when every row completed, so a bar of a
 * cancelled or failed campaign never looks complete.
 */
export function progressCells(p: RowProgress, width: number): string {
  const parts = [p.completed, p.failed, p.cancelled, p.pending];
  if (p.total <= 0) return BAR_CELLS.pending.repeat(width);
  const cells = parts.map((n) => (n > 0 ? Math.max(1, Math.floor((n * width) / p.total)) : 0));
  let spare = width - cells.reduce((a, b) => a + b, 0);
  // Rounding down leaves cells over: the last part not 0 takes them (pending while rows wait).
  const last = parts.findLastIndex((n) => n > 0);
  while (spare > 0 && last >= 0) {
    cells[last]! += 1;
    spare -= 1;
  }
  // A part raised to one cell may overflow: the widest part gives them back.
  while (spare < 0) {
    const widest = cells.indexOf(Math.max(...cells));
    cells[widest]! -= 1;
    spare += 1;
  }
  const chars = [BAR_CELLS.completed, BAR_CELLS.failed, BAR_CELLS.cancelled, BAR_CELLS.pending];
  return cells.map((n, i) => chars[i]!.repeat(n)).join("");
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

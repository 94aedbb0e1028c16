// One entry of the audit trail and its place in the hash chain (docs/architecture/audit.md,
// "The chain"). Redis holds none of it; the API key and e-mail addresses never enter it.
import { createHash } from "node:crypto";
import { type Actor, sameActor } from "./actor.js";

/** What an entry records. The worker's own pauses are `auto_pause`, the reason in details. */
export type AuditAction =
  | "import"
  | "approve"
  | "pause"
  | "resume"
  | "cancel"
  | "retry"
  | "reconcile"
  | "archive"
  | "restore"
  | "forget"
  | "prune"
  | "budget"
  | "limit"
  | "auto_pause";

/** How the action ended: done, refused by a rule or a check (with the reason), or failed. */
type AuditResult = "ok" | "refused" | "failed";

/** Counts, money per currency (as decimal strings), hashes and names: never an e-mail. */
export type AuditDetails = Record<string, AuditValue>;
type AuditValue = string | number | boolean | null | AuditValue[] | { [k: string]: AuditValue };

/** An entry as a command hands it to the trail, before the trail numbers and chains it. */
export interface AuditDraft {
  actor: Actor;
  action: AuditAction;
  /** The campaign acted on; null for an action on none (a limit change). */
  campaign: string | null;
  details: AuditDetails;
  result: AuditResult;
  /** Why it was refused or failed, in the one line the command printed. */
  reason?: string;
}

/** An entry as stored: numbered from 1, timed (UTC ISO), and chained to the one before. */
export interface AuditEntry {
  seq: number;
  at: string;
  actor: string;
  source: Actor["source"];
  where: string;
  action: AuditAction;
  campaign: string | null;
  details: AuditDetails;
  result: AuditResult;
  reason: string | null;
  /** The sha256 (hex) of the entry before, in canonical form; 64 zeros for the first. */
  prev: string;
  /** The sha256 (hex) of this entry's canonical form without this field. */
  hash: string;
}

/** The `prev` of the first entry. */
export const FIRST_PREV = "0".repeat(64);

/**
 * JSON with every object's keys sorted and no spaces: the same entry is the same text whoever
 * wrote it and wherever it was stored (a file line, a PostgreSQL row).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((k) => record[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`).join(",")}}`;
}

/** The sha256 (hex) of an entry's canonical form, its own `hash` left out. */
export function entryHash(entry: Omit<AuditEntry, "hash"> & { hash?: string }): string {
  const { hash: _own, ...rest } = entry;
  return createHash("sha256").update(canonicalJson(rest)).digest("hex");
}

/** The draft numbered `seq`, timed now and chained after the entry whose hash is `prev`. */
export function sealEntry(
  draft: AuditDraft,
  seq: number,
  prev: string,
  at = new Date(),
): AuditEntry {
  const unsealed = {
    seq,
    at: at.toISOString(),
    actor: draft.actor.name,
    source: draft.actor.source,
    where: draft.actor.where,
    action: draft.action,
    campaign: draft.campaign,
    details: draft.details,
    result: draft.result,
    reason: draft.reason ?? null,
    prev,
  };
  return { ...unsealed, hash: entryHash(unsealed) };
}

/** The stored text of an entry: its canonical form, hash included. */
export function entryText(entry: AuditEntry): string {
  return canonicalJson(entry);
}

/** Which entries a listing shows. */
export interface AuditFilter {
  campaign?: string;
  /** Entries at or after this time. */
  since?: Date;
  actor?: string;
}

export function matches(entry: AuditEntry, filter: AuditFilter): boolean {
  if (filter.campaign !== undefined && entry.campaign !== filter.campaign) return false;
  if (filter.actor !== undefined && !sameActor(entry.actor, filter.actor)) return false;
  if (filter.since && Date.parse(entry.at) < filter.since.getTime()) return false;
  return true;
}

import type { AuditEntry } from "../audit/entry.js";
import { escapeHtml } from "./html-escape.js";
import { timeHtml } from "./page-layout.js";

/** Entries shown on a campaign's page, the newest; `giftjobs audit --campaign N` lists them all. */
const SHOWN = 50;

/** A campaign's entries as read, and the break of the chain the read found, if it found one. */
export interface AuditListing {
  entries: AuditEntry[];
  problem?: string;
}

/**
 * The campaign's audit entries as a small table, newest first (docs/architecture/audit.md):
 * who, from where, when, what and how it ended. `listing` undefined: the trail cannot be read.
 * A broken chain is said first, and nothing of it is shown as true ("Reading is verifying").
 */
export function auditTable(campaign: string, listing: AuditListing | undefined): string {
  const heading = "<h2>Audit trail</h2>";
  if (!listing)
    return `${heading}<p>The audit trail cannot be read now (see the dashboard's log).</p>`;
  if (listing.problem !== undefined)
    return `${heading}<p class="broken"><strong>The audit trail is broken</strong>: ${escapeHtml(listing.problem)}. <code>giftjobs audit verify</code> names it; <code>giftjobs audit --no-verify</code> lists the entries as stored.</p>`;
  const { entries } = listing;
  if (entries.length === 0) return `${heading}<p>No audit entries for this campaign.</p>`;
  const shown = entries.slice(-SHOWN).reverse();
  const rows = shown
    .map((e) => {
      const result = e.result === "ok" ? "ok" : `${e.result}: ${e.reason ?? ""}`;
      return `<tr><td>${e.seq}</td><td>${timeHtml(e.at)}</td><td>${escapeHtml(e.actor)} <small>(${escapeHtml(e.source)})</small></td><td>${escapeHtml(e.where)}</td><td>${escapeHtml(e.action)}</td><td>${escapeHtml(result)}</td></tr>`;
    })
    .join("");
  const more =
    entries.length > SHOWN
      ? `<p><small>the newest ${SHOWN} of ${entries.length}: <code>giftjobs audit --campaign ${escapeHtml(campaign)}</code> lists them all</small></p>`
      : "";
  return `${heading}<table class="audit"><thead><tr><th>#</th><th>when</th><th>who</th><th>from</th><th>action</th><th>result</th></tr></thead><tbody>${rows}</tbody></table>${more}`;
}

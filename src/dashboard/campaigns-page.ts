import { ROW_STATUSES } from "../ledger/row-status.js";
import { maskEmails } from "../log.js";
import type { CampaignOverview } from "./campaign-overviews.js";
import type { CampaignProgress } from "./campaign-progress.js";
import { escapeHtml } from "./html-escape.js";
import { layout, timeHtml } from "./page-layout.js";

/** Count columns of the table, in the order rows move through them. */
const COUNTS = ["total", ...ROW_STATUSES, "replayed"] as const;

/** Seconds between the page's own updates. */
export const LIVE_SECONDS = 5;

export interface CampaignsPageOptions {
  /** Where the queue dashboard is mounted, e.g. `/queues`. */
  boardPath: string;
  /** Nonce of the response's Content-Security-Policy. */
  nonce: string;
}

/**
 * The campaigns page: per campaign its state, progress, row counts, money, times, and for a
 * running one its rate and ETA. It updates itself every LIVE_SECONDS by fetching itself again
 * and swapping its `<main>`: the server renders (and escapes) every cell, the script only moves
 * the HTML in. Without script a meta refresh reloads it.
 */
export function renderCampaignsPage(
  campaigns: CampaignOverview[],
  options: CampaignsPageOptions,
): string {
  const main = campaigns.length
    ? `${stalls(campaigns)}${table(campaigns)}`
    : "<p>No campaigns yet: <code>giftjobs orders import FILE --campaign NAME</code>.</p>";
  return layout({
    title: "giftjobs campaigns",
    nonce: options.nonce,
    head: `<noscript><meta http-equiv="refresh" content="${LIVE_SECONDS * 2}"></noscript>`,
    nav: `<a href="${escapeHtml(options.boardPath)}">Queues</a> · <a href="/campaigns.json">JSON</a> · <small id="live">updates every ${LIVE_SECONDS} s</small>`,
    main,
    script: LIVE_SCRIPT,
  });
}

function table(campaigns: CampaignOverview[]): string {
  const head = [
    "campaign",
    "state",
    "progress",
    ...COUNTS.map((c) => c.replace("_", " ")),
    "money (spent / planned price)",
    "times",
    "rate",
    "ETA",
  ].map((c) => `<th>${escapeHtml(c)}</th>`);
  const rows = campaigns.map((c) => {
    const counts = COUNTS.map(
      (k) => `<td class="n">${escapeHtml(c[k].toLocaleString("en-US"))}</td>`,
    );
    const link = `<a href="/campaigns/${encodeURIComponent(c.campaign)}">${escapeHtml(c.campaign)}</a>`;
    return `<tr data-campaign="${escapeHtml(c.campaign)}"${stalledRow(c)}><td>${link}</td><td>${state(c)}</td><td>${bar(c)}</td>${counts.join("")}<td class="nw">${money(c)}</td><td class="nw">${times(c)}</td><td>${rate(c.progress)}</td><td>${eta(c.progress)}</td></tr>`;
  });
  return `<table><thead><tr>${head.join("")}</tr></thead><tbody>\n${rows.join("\n")}\n</tbody></table>
<p class="muted"><small>Progress: rows completed, failed (final or uncertain) or cancelled, over all rows.
Rate: rows done per minute between this dashboard's reads of the last minute (shown once two reads are 3 s apart);
ETA: rows left at that rate. Both are for running campaigns only.</small></p>`;
}

/**
 * Above the table, one line per stalled campaign with its fix: a stall must not look like a
 * running campaign at 0% (docs/architecture/operators.md, "Stalled campaigns").
 */
function stalls(campaigns: CampaignOverview[]): string {
  const lines = campaigns.flatMap((c) =>
    c.stalled
      ? [
          `<p class="stalled" role="alert" data-stalled="${escapeHtml(c.campaign)}">` +
            `campaign <strong>${escapeHtml(c.campaign)}</strong> is stalled: ` +
            `${escapeHtml(maskEmails(c.stalled.message))}</p>`,
        ]
      : [],
  );
  return lines.join("\n");
}

/**
 * A stalled campaign's row is drawn in the stall colour, its reason in an attribute and the
 * message as its title; its cells say what they said before.
 */
function stalledRow(c: CampaignOverview): string {
  if (!c.stalled) return "";
  const title = escapeHtml(maskEmails(c.stalled.message));
  return ` class="stalled" data-stalled-reason="${escapeHtml(c.stalled.reason)}" title="${title}"`;
}

function state(c: CampaignOverview): string {
  const text = `<span class="state">${escapeHtml(c.state)}</span>`;
  if (!c.paused || c.state === "done") return text;
  const since = c.paused.since ? ` <small>since ${timeHtml(c.paused.since)}</small>` : "";
  return `${text}<br><span class="paused">${escapeHtml(maskEmails(c.paused.reason))}</span>${since}`;
}

/** A bar of completed, failed and cancelled rows over all rows, and `done / total`. */
export function bar(c: CampaignOverview): string {
  const total = c.total || 1;
  const part = (cls: string, n: number) =>
    n > 0 ? `<span class="${cls}" style="width:${((n / total) * 100).toFixed(2)}%"></span>` : "";
  const pct = c.total ? Math.floor((c.progress.done / c.total) * 100) : 0;
  const label = `${c.progress.done.toLocaleString("en-US")} / ${c.total.toLocaleString("en-US")} (${pct}%)`;
  return `<div class="bar" role="progressbar" aria-valuemin="0" aria-valuemax="${c.total}" aria-valuenow="${c.progress.done}">${part("completed", c.completed)}${part("failed", c.failed_final + c.failed_uncertain)}${part("cancelled", c.cancelled)}</div><small class="done">${escapeHtml(label)}</small>`;
}

export function money(c: CampaignOverview): string {
  const lines = Object.entries(c.money).map(([currency, m]) => {
    const budget = m.budget ? ` <small>budget ${escapeHtml(m.budget)}</small>` : "";
    return `<div>${escapeHtml(currency)} ${escapeHtml(m.spent)} / ${escapeHtml(m.price)}${budget}</div>`;
  });
  return lines.join("") || "-";
}

export function times(c: CampaignOverview): string {
  const entries: [string, string | null][] = [
    ["created", c.created_at],
    ["approved", c.approved_at],
    ["finished", c.finished_at],
    ["cancelled", c.cancelled_at],
    ["archived", c.archived_at],
  ];
  return entries
    .filter(([, at]) => at)
    .map(([label, at]) => `<div><small>${label}</small> ${timeHtml(at)}</div>`)
    .join("");
}

export function rate(p: CampaignProgress): string {
  if (p.rate_per_minute === null) return "-";
  return `<span title="over the last ${p.measured_seconds} s">${escapeHtml(p.rate_per_minute)}/min</span>`;
}

export function eta(p: CampaignProgress): string {
  if (p.rate_per_minute === null) return "-";
  if (p.eta_seconds === null) return p.remaining > 0 ? "no progress" : "-";
  return escapeHtml(duration(p.eta_seconds));
}

/** `45 s`, `12 min`, `3 h 20 min`. */
export function duration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.ceil(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** Fetches the page again and swaps in its `<main>` (HTML the server escaped). */
const LIVE_SCRIPT = `
(() => {
  const note = document.getElementById("live");
  let last = new Date().toLocaleTimeString();
  async function update() {
    try {
      const res = await fetch(location.href, { cache: "no-store" });
      if (!res.ok) throw new Error("HTTP " + res.status);
      const fresh = new DOMParser().parseFromString(await res.text(), "text/html").querySelector("main");
      if (fresh) document.querySelector("main").replaceChildren(...fresh.childNodes);
      last = new Date().toLocaleTimeString();
      note.textContent = "updated " + last;
      note.className = "";
    } catch (error) {
      note.textContent = "NOT UPDATED since " + last + ": " + error.message;
      note.className = "error";
    }
  }
  setInterval(update, ${LIVE_SECONDS * 1000});
})();
`;

import { whoMayApprove } from "../campaigns/four-eyes.js";
import { doneText, rowProgress } from "../campaigns/progress.js";
import { grouped } from "../grouped.js";
import { ROW_STATUSES } from "../ledger/row-status.js";
import { maskEmails } from "../log.js";
import type { CampaignOverview } from "./campaign-overviews.js";
import type { CampaignProgress } from "./campaign-progress.js";
import { escapeHtml } from "./html-escape.js";
import { sparkline } from "./minute-chart.js";
import type { MinutePoint } from "./minute-history.js";
import { layout } from "./page-layout.js";

/** Count columns of the table, in the order rows move through them. */
const COUNTS = ["total", ...ROW_STATUSES, "replayed"] as const;

/** Headers of the count columns: narrow, so the table fits a laptop's 1280 px. */
const COUNT_HEADS: Record<(typeof COUNTS)[number], string> = {
  total: "total",
  queued: "queued",
  in_flight: "in flight",
  submitted: "sub&shy;mitted",
  completed: "com&shy;pleted",
  failed_final: "failed final",
  failed_uncertain: "failed uncer&shy;tain",
  cancelled: "can&shy;celled",
  replayed: "re&shy;played",
};

const campaignPath = (campaign: string) => `/campaigns/${encodeURIComponent(campaign)}`;

/** Seconds between the page's own updates. */
const LIVE_SECONDS = 5;

export interface CampaignsPageOptions {
  /** Where the queue dashboard is mounted, e.g. `/queues`. */
  boardPath: string;
  /** Nonce of the response's Content-Security-Policy. */
  nonce: string;
  /** Rows ended per minute of each campaign, for its sparkline. */
  histories?: ReadonlyMap<string, MinutePoint[]>;
  /** Who is signed in, for the header (login-routes.ts, whoHtml). */
  user?: string;
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
    ? `${attention(campaigns)}${table(campaigns, options.histories)}`
    : "<p>No campaigns yet: <code>giftjobs orders import FILE --campaign NAME</code>.</p>";
  return layout({
    title: "giftjobs campaigns",
    nonce: options.nonce,
    head: `<noscript><meta http-equiv="refresh" content="${LIVE_SECONDS * 2}"></noscript>`,
    nav: `<a href="${escapeHtml(options.boardPath)}">Queues</a> · <a href="/campaigns.json">JSON</a> · <small id="live">updates every ${LIVE_SECONDS} s</small>`,
    user: options.user,
    main,
    script: LIVE_SCRIPT,
  });
}

function table(
  campaigns: CampaignOverview[],
  histories: ReadonlyMap<string, MinutePoint[]> | undefined,
): string {
  const head = [
    "campaign",
    "state",
    "progress, rate, ETA",
    ...COUNTS.map((c) => COUNT_HEADS[c]),
    "money (spent / planned price)",
    "times (UTC)",
  ].map((c) => `<th>${c}</th>`);
  const now = Date.now();
  const rows = campaigns.map((c) => {
    const counts = COUNTS.map((k) => `<td class="n">${escapeHtml(grouped(c[k]))}</td>`);
    const link = `<a href="${campaignPath(c.campaign)}">${escapeHtml(c.campaign)}</a>`;
    const spark = sparkline(
      histories?.get(c.campaign) ?? [],
      c.state === "running" ? now : undefined,
    );
    return `<tr data-campaign="${escapeHtml(c.campaign)}"${stalledRow(c)}><td>${link}${spark ? `<br>${spark}` : ""}</td><td class="state-cell">${state(c)}</td><td class="progress">${bar(c)}</td>${counts.join("")}<td class="money">${money(c)}</td><td class="times">${times(c)}</td></tr>`;
  });
  return `<table class="campaigns"><thead><tr>${head.join("")}</tr></thead><tbody>\n${rows.join("\n")}\n</tbody></table>
<p class="muted"><small>Progress: rows done (at an end: completed, failed or cancelled), its three parts apart and drawn in their own colours (a cancelled campaign's bar is not complete).
Rate: rows ended per minute between this dashboard's reads of the last minute (shown once two reads are 3 s apart);
ETA: rows left at that rate. Both are for running campaigns only. Stalled and paused campaigns come first.</small></p>`;
}

/**
 * Above the table, one line per stalled or paused campaign with what to do: a stall must not
 * look like a running campaign at 0% (docs/architecture/operators.md, "Stalled campaigns").
 */
function attention(campaigns: CampaignOverview[]): string {
  return [stalls(campaigns), pauses(campaigns)].filter(Boolean).join("\n");
}

/**
 * A line per paused campaign pointing to its page: the reason is in the table, once and short
 * (stateCell), its whole text and the fix on the campaign's page.
 */
function pauses(campaigns: CampaignOverview[]): string {
  const lines = campaigns.flatMap((c) =>
    c.paused && c.state === "paused"
      ? [
          `<p class="paused" data-paused="${escapeHtml(c.campaign)}">` +
            `campaign <strong>${escapeHtml(c.campaign)}</strong> is paused: ` +
            `<a href="${campaignPath(c.campaign)}">its page</a> says why and what to do</p>`,
        ]
      : [],
  );
  return lines.join("\n");
}

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

/**
 * The state, and under it a paused campaign's reason, short (shortReason: its whole text in the
 * title and on the campaign's page), or who may approve a held one (whoMayApprove, as its page).
 */
function state(c: CampaignOverview): string {
  const text = `<span class="state">${escapeHtml(c.state)}</span>`;
  if (c.state === "held")
    return `${text}<br><small class="approver" data-approver>${escapeHtml(whoMayApprove(c.four_eyes?.importers))}</small>`;
  if (!c.paused || c.state === "done") return text;
  const reason = maskEmails(c.paused.reason);
  const since = c.paused.since ? ` <small>since ${shortTime(c.paused.since)}</small>` : "";
  return `${text}<br><span class="paused reason" title="${escapeHtml(reason)}">${escapeHtml(shortReason(reason))}</span>${since}`;
}

/** Characters of a pause reason the table shows at most. */
const SHORT_REASON = 48;

/**
 * A pause reason as the campaigns table shows it: its first clause (`daily_limit: ... spent on
 * DAY`, led by its type: jobs/orders/pause-reason.ts), cut at a word to SHORT_REASON characters
 * with an ellipsis. The whole reason, with what to do, is on the campaign's page.
 */
function shortReason(reason: string): string {
  const first = reason.split(/(?<=[.;])\s/)[0]!.replace(/[.;]$/, "");
  if (first.length <= SHORT_REASON) return first;
  const cut = first.slice(0, SHORT_REASON);
  const space = cut.lastIndexOf(" ");
  return `${(space > SHORT_REASON / 2 ? cut.slice(0, space) : cut).replace(/[,:;]$/, "")}…`;
}

/**
 * A bar of completed, failed and cancelled rows over all rows, each its own colour, beside it
 * the rate and ETA, and under it the rows done as every view says it (doneText: done is the
 * rows at an end, its three parts apart; docs/concepts.md, "Done"), so a cancelled campaign's
 * bar never reads as complete.
 */
function bar(c: CampaignOverview): string {
  const p = rowProgress(c);
  const total = c.total || 1;
  const part = (cls: string, n: number) =>
    n > 0 ? `<span class="${cls}" style="width:${((n / total) * 100).toFixed(2)}%"></span>` : "";
  const speed =
    c.progress.rate_per_minute === null
      ? ""
      : `<span class="speed"><span>${rate(c.progress)} ·</span> <span>ETA ${eta(c.progress)}</span></span>`;
  return `<div class="meter"><div class="bar" role="progressbar" aria-valuemin="0" aria-valuemax="${c.total}" aria-valuenow="${p.done}">${part("completed", p.completed)}${part("failed", p.failed)}${part("cancelled", p.cancelled)}</div>${speed}</div><small class="done">${escapeHtml(doneText(p))}</small>`;
}

/**
 * Spent / planned price per currency on one line, its budget on the next, so no amount is
 * split over lines and the table still fits a laptop's screen.
 */
function money(c: CampaignOverview): string {
  const amount = (text: string) => `<span class="amount">${escapeHtml(text)}</span>`;
  const lines = Object.entries(c.money).map(([currency, m]) => {
    const budget = m.budget ? ` <small>budget ${amount(m.budget)}</small>` : "";
    return `<div>${escapeHtml(currency)} ${amount(m.spent)} / ${amount(m.price)}${budget}</div>`;
  });
  return lines.join("") || "-";
}

function times(c: CampaignOverview): string {
  const entries: [string, string | null][] = [
    ["created", c.created_at],
    ["approved", c.approved_at],
    ["finished", c.finished_at],
    ["cancelled", c.cancelled_at],
    ["archived", c.archived_at],
  ];
  return entries
    .filter(([, at]) => at)
    .map(([label, at]) => `<div><small>${label}</small> ${shortTime(at!)}</div>`)
    .join("");
}

/** `11-23 18:30` in the cell, the whole UTC time in its `datetime` and title. */
function shortTime(iso: string): string {
  const full = `${iso.slice(0, 19).replace("T", " ")} UTC`;
  return `<time datetime="${escapeHtml(iso)}" title="${escapeHtml(full)}">${escapeHtml(iso.slice(5, 16).replace("T", " "))}</time>`;
}

function rate(p: CampaignProgress): string {
  if (p.rate_per_minute === null) return "-";
  return `<span title="over the last ${p.measured_seconds} s">${escapeHtml(p.rate_per_minute)}/min</span>`;
}

function eta(p: CampaignProgress): string {
  if (p.rate_per_minute === null) return "-";
  if (p.eta_seconds === null) return p.remaining > 0 ? "no progress" : "-";
  return escapeHtml(duration(p.eta_seconds));
}

/** `45 s`, `12 min`, `3 h 20 min`. */
function duration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.ceil(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/**
 * Fetches the page again and swaps in its `<main>` (HTML the server escaped). The time of the
 * last update is UTC in 24-hour time, as every other time of the dashboard.
 */
const LIVE_SCRIPT = `
(() => {
  const note = document.getElementById("live");
  const now = () => new Date().toISOString().slice(11, 19) + " UTC";
  let last = now();
  async function update() {
    try {
      const res = await fetch(location.href, { cache: "no-store" });
      if (!res.ok) throw new Error("HTTP " + res.status);
      const fresh = new DOMParser().parseFromString(await res.text(), "text/html").querySelector("main");
      if (fresh) document.querySelector("main").replaceChildren(...fresh.childNodes);
      last = now();
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

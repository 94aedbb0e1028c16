import type { CampaignStatus } from "../orders/campaign-status.js";
import { ROW_STATUSES } from "../orders/row-status.js";
import { escapeHtml } from "./html-escape.js";

/** Count columns of the table, in the order rows move through them. */
const COLUMNS = ["total", ...ROW_STATUSES] as const;

export interface CampaignsPageOptions {
  /** Where the queue dashboard is mounted, e.g. `/queues`. */
  boardPath: string;
  /** Seconds between reloads; 0 for none. @defaultValue 10 */
  refreshSeconds?: number;
}

/** The campaigns page: one row per campaign, its row counts by status and its pause. */
export function renderCampaignsPage(
  statuses: CampaignStatus[],
  options: CampaignsPageOptions,
): string {
  const refresh = options.refreshSeconds ?? 10;
  const body = statuses.length
    ? table(statuses)
    : "<p>No campaigns yet: <code>giftjobs orders import FILE --campaign NAME</code>.</p>";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
${refresh > 0 ? `<meta http-equiv="refresh" content="${refresh}">` : ""}
<title>giftjobs campaigns</title>
<style>${STYLE}</style>
</head>
<body>
<header><h1>giftjobs campaigns</h1>
<nav><a href="${escapeHtml(options.boardPath)}">Queues</a> · <a href="campaigns.json">JSON</a></nav></header>
<main>${body}</main>
</body>
</html>
`;
}

function table(statuses: CampaignStatus[]): string {
  const head = ["campaign", "state", ...COLUMNS, "replayed", "paused"].map(
    (c) => `<th>${escapeHtml(c)}</th>`,
  );
  const rows = statuses.map((s) => {
    const counts = [...COLUMNS, "replayed" as const].map(
      (c) => `<td class="n">${escapeHtml(s[c])}</td>`,
    );
    return `<tr><td>${escapeHtml(s.campaign)}</td><td>${escapeHtml(s.state)}</td>${counts.join("")}<td>${paused(s)}</td></tr>`;
  });
  return `<table><thead><tr>${head.join("")}</tr></thead><tbody>\n${rows.join("\n")}\n</tbody></table>`;
}

function paused(status: CampaignStatus): string {
  if (!status.paused) return "";
  const since = status.paused.since
    ? ` <small>since ${escapeHtml(status.paused.since)}</small>`
    : "";
  return `<span class="paused">${escapeHtml(status.paused.reason)}</span>${since}`;
}

const STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 2rem; color: #222; }
header { display: flex; align-items: baseline; gap: 2rem; }
h1 { font-size: 1.4rem; margin: 0 0 1rem; }
table { border-collapse: collapse; }
th, td { padding: .35rem .7rem; border-bottom: 1px solid #ddd; text-align: left; }
th { background: #f4f4f4; font-weight: 600; }
td:first-child { white-space: nowrap; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.paused { color: #a40000; }
`;

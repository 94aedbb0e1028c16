import { whoMayApprove } from "../campaigns/four-eyes.js";
import { doneText, rowProgress } from "../campaigns/progress.js";
import { repeatsText } from "../campaigns/status.js";
import type { CampaignSummary } from "../campaigns/summary.js";
import { grouped } from "../grouped.js";
import { maskEmails } from "../log.js";
import { plural } from "../plural.js";
import { type AuditListing, auditTable } from "./audit-table.js";
import type { CampaignAction } from "./campaign-actions.js";
import {
  FAILURE_STATUSES,
  type FailureGroup,
  type FailurePage,
  type FailureStatus,
} from "./campaign-failures.js";
import { escapeHtml } from "./html-escape.js";
import { minuteChart } from "./minute-chart.js";
import type { MinutePoint } from "./minute-history.js";
import { layout, timeHtml } from "./page-layout.js";

export interface CampaignPageOptions {
  summary: CampaignSummary;
  failures: FailurePage;
  /** Rows ended per minute over the campaign's life (MinuteHistory). */
  history: MinutePoint[];
  /** The statuses listed: one chosen with `?status=`, or all of FAILURE_STATUSES. */
  listed: readonly FailureStatus[];
  /**
   * The buttons to show with the process's CSRF token; null without `--allow-actions`, or
   * without the dashboard token where one is needed.
   */
  actions: {
    csrf: string;
    shown: readonly CampaignAction[];
    /** Actions this state allows but the user's roles do not. */
    withheld?: readonly CampaignAction[];
  } | null;
  /** With actions allowed but not to this request: where to log in for them. */
  loginPath?: string;
  /** The outcome of the action just run. */
  result?: { ok: boolean; line: string };
  /** The campaign's audit entries, checked as read; undefined when the trail cannot be read. */
  audit?: AuditListing;
  boardPath: string;
  nonce: string;
  /** Who is signed in, for the header (login-routes.ts, whoHtml). */
  user?: string;
  /** Whether the user may download the report (the operate role). */
  mayDownload?: boolean;
  /** A campaign held by the four-eyes rule: the rule and who imported it. */
  fourEyes?: { rule: string; importers: string[] };
}

/** Who may approve a campaign the four-eyes rule holds (docs/architecture/audit.md, "Four eyes"). */
function fourEyesLine(fourEyes: CampaignPageOptions["fourEyes"]): string {
  if (!fourEyes) return "";
  return `<p class="held" data-four-eyes>Held by the four-eyes rule (${escapeHtml(fourEyes.rule)}): ${escapeHtml(whoMayApprove(fourEyes.importers))}.</p>\n`;
}

function reportLink(path: string, campaign: string, mayDownload = false): string {
  if (!mayDownload)
    return "<p><small>The report (every row, e-mail addresses unmasked) needs the operate role.</small></p>";
  return `<p><a href="${path}/report.csv" download>Download report (CSV)</a> <small>the file <code>giftjobs orders report --campaign ${escapeHtml(campaign)}</code> writes: every row, e-mail addresses unmasked</small></p>`;
}

const campaignPath = (campaign: string) => `/campaigns/${encodeURIComponent(campaign)}`;

/** A campaign's page: its summary, its actions, its failed and cancelled rows (paged). */
export function renderCampaignPage(options: CampaignPageOptions): string {
  const s = options.summary;
  const path = campaignPath(s.campaign);
  const result = options.result
    ? `<div class="result ${options.result.ok ? "ok" : "error"}" role="status">${escapeHtml(options.result.line)}</div>`
    : "";
  const main = `${result}
${summary(s)}
<h2>Rows per minute</h2>
${minuteChart(options.history, s.state === "running" ? Date.now() : undefined)}
${fourEyesLine(options.fourEyes)}${reportLink(path, s.campaign, options.mayDownload)}
${options.actions ? actions(s.campaign, options.actions) : login(options.loginPath)}
${failures(s, options.failures, options.listed)}
${auditTable(s.campaign, options.audit)}`;
  return layout({
    title: `campaign ${s.campaign}`,
    nonce: options.nonce,
    nav: nav(options.boardPath),
    user: options.user,
    main,
    script: options.actions ? CONFIRM_SCRIPT : undefined,
  });
}

function nav(boardPath: string): string {
  return `<a href="/campaigns">Campaigns</a> · <a href="${escapeHtml(boardPath)}">Queues</a>`;
}

/** Rows paid again knowingly (--allow-repeats), per earlier campaign. */
function repeats(s: CampaignSummary): string {
  const text = repeatsText(s.repeats);
  return text
    ? `<dt>repeats</dt><dd class="repeats">${escapeHtml(text.replace(/^repeats: /, ""))}</dd>`
    : "";
}

function summary(s: CampaignSummary): string {
  const paused = s.paused
    ? `<dt>paused</dt><dd><span class="paused">${escapeHtml(maskEmails(s.paused.reason))}</span> ${s.paused.since ? `<small>since ${timeHtml(s.paused.since)}</small>` : ""}</dd>`
    : "";
  const stalledSince = s.stalled?.since ? ` <small>since ${timeHtml(s.stalled.since)}</small>` : "";
  const stalled = s.stalled
    ? `<dt>stalled</dt><dd><span class="stalled">${escapeHtml(maskEmails(s.stalled.message))}` +
      `</span>${stalledSince}</dd>`
    : "";
  const counts = [
    ["queued", s.queued],
    ["in flight", s.in_flight],
    ["submitted", s.submitted],
    ["completed", s.completed],
    ["failed_final", s.failed_final],
    ["failed_uncertain", s.failed_uncertain],
    ["cancelled", s.cancelled],
    ["replayed", s.replayed],
  ]
    .map(([k, n]) => `${escapeHtml(k)} ${escapeHtml(grouped(Number(n)))}`)
    .join(" · ");
  const money = Object.entries(s.money)
    .map(
      ([currency, m]) =>
        `<div>${escapeHtml(currency)}: ${escapeHtml(m.rows)} ${plural(m.rows, "row")}, face value ${escapeHtml(m.face_value)}, price ${escapeHtml(m.price)}, spent ${escapeHtml(m.spent)}${m.budget ? `, budget ${escapeHtml(m.budget)}` : ""}</div>`,
    )
    .join("");
  const time = (label: string, at: string | null) =>
    at ? `<dt>${label}</dt><dd>${timeHtml(at)}</dd>` : "";
  return `<dl class="summary">
<dt>state</dt><dd class="state">${escapeHtml(s.state)}</dd>${paused}${stalled}${repeats(s)}
<dt>done</dt><dd class="done">${escapeHtml(doneText(rowProgress(s)))}</dd>
<dt>rows</dt><dd>${escapeHtml(grouped(s.total))}: ${counts}</dd>
<dt>money</dt><dd>${money || "-"}</dd>
${time("created", s.created_at)}${time("approved", s.approved_at)}${time("finished", s.finished_at)}${time("cancelled", s.cancelled_at)}${time("archived", s.archived_at)}
</dl>`;
}

function login(loginPath: string | undefined): string {
  if (!loginPath) return "";
  return `<p class="actions muted"><a href="${escapeHtml(loginPath)}">Log in</a> to use the actions.</p>`;
}

function actions(campaign: string, options: NonNullable<CampaignPageOptions["actions"]>): string {
  const { csrf, shown, withheld = [] } = options;
  const roles = [...new Set(withheld.map((a) => a.role))].join(" or ");
  const note = withheld.length
    ? ` <small class="muted">${escapeHtml(withheld.map((a) => a.name).join(", "))}: your roles do not allow it (it needs ${escapeHtml(roles)})</small>`
    : "";
  if (shown.length === 0)
    return `<p class="actions muted">${withheld.length ? "" : "No action applies in this state."}${note}</p>`;
  const forms = shown.map(
    (a) =>
      `<form method="post" action="${campaignPath(campaign)}/actions/${escapeHtml(a.name)}" data-confirm="${escapeHtml(a.confirm(campaign))}"><input type="hidden" name="csrf" value="${escapeHtml(csrf)}"><button type="submit">${escapeHtml(a.label)}</button></form>`,
  );
  return `<div class="actions">${forms.join("")}${note}</div>`;
}

function failures(s: CampaignSummary, page: FailurePage, listed: readonly FailureStatus[]): string {
  const path = campaignPath(s.campaign);
  const all = listed.length === FAILURE_STATUSES.length;
  const filters = [
    all ? "<strong>all</strong>" : `<a href="${path}">all</a>`,
    ...FAILURE_STATUSES.map((status) => {
      const label = `${status} (${grouped(s[status])})`;
      return !all && listed[0] === status
        ? `<strong>${label}</strong>`
        : `<a href="${path}?status=${status}">${label}</a>`;
    }),
  ].join(" · ");
  const heading = `<h2>Failed and cancelled rows</h2>
<p>${filters}</p>
<p class="muted"><small>Orders that failed for good are completed jobs in the queue dashboard (the job ran to its end); their outcome is here. failed_final: no order was made (retry with <code>orders retry --new-key</code>). failed_uncertain: an order may exist (retry under the same key).</small></p>`;
  if (page.total === 0) return `${heading}<p>None.</p>`;
  return `${heading}
${groups(s.campaign, page.groups)}
<h3>Each row</h3>
${rowsTable(page)}
${pager(path, page, all ? undefined : listed[0])}`;
}

/** One line per reason: how many rows, which lines, and the command that deals with them. */
function groups(campaign: string, list: FailureGroup[]): string {
  const rows = list.map((g) => {
    const more = g.rows > g.lines.length ? ` and ${grouped(g.rows - g.lines.length)} more` : "";
    const reason = [g.error_type, g.error_message].filter(Boolean).join(": ") || "-";
    return `<tr data-group="${escapeHtml(g.status)}"><td class="n">${escapeHtml(grouped(g.rows))}</td><td>${escapeHtml(g.status)}</td><td class="reason">${escapeHtml(reason)}</td><td><small>lines ${escapeHtml(g.lines.join(", "))}${escapeHtml(more)}</small></td><td>${nextStep(campaign, g.status)}</td></tr>`;
  });
  return `<table class="groups"><thead><tr><th>rows</th><th>status</th><th>reason</th><th>lines</th><th>next</th></tr></thead><tbody>
${rows.join("\n")}
</tbody></table>`;
}

/** What to run for rows of a status (docs/commands.md, "Retry"). */
function nextStep(campaign: string, status: FailureStatus): string {
  const c = (command: string, extra = "") =>
    `<code>giftjobs orders ${command} --campaign ${escapeHtml(campaign)}${extra}</code>`;
  if (status === "failed_final")
    return `${c("retry", " --new-key")} <small>once the cause is fixed (no order was made; a row refused for its data is refused again)</small>`;
  if (status === "failed_uncertain")
    return `${c("reconcile")}, then ${c("retry")} <small>(an order may exist: the same key)</small>`;
  return "<small>none: never sent, the campaign was cancelled</small>";
}

function rowsTable(page: FailurePage): string {
  const head = [
    "line",
    "reference",
    "e-mail",
    "product",
    "face value",
    "status",
    "error type",
    "error message",
  ]
    .map((h) => `<th>${h}</th>`)
    .join("");
  const rows = page.rows.map(
    (r) =>
      `<tr><td class="n">${escapeHtml(r.line)}</td><td>${escapeHtml(r.reference)}</td><td>${escapeHtml(r.email)}</td><td>${escapeHtml(r.product_code)}</td><td class="n">${escapeHtml(`${r.face_value} ${r.currency}`)}</td><td>${escapeHtml(r.status)}</td><td>${escapeHtml(r.error_type)}</td><td>${escapeHtml(r.error_message)}</td></tr>`,
  );
  return `<table class="failures"><thead><tr>${head}</tr></thead><tbody>
${rows.join("\n")}
</tbody></table>`;
}

function pager(path: string, page: FailurePage, status: FailureStatus | undefined): string {
  const href = (n: number) => `${path}?${status ? `status=${status}&amp;` : ""}page=${n}`;
  const previous = page.page > 1 ? `<a href="${href(page.page - 1)}" rel="prev">previous</a>` : "";
  const next = page.page < page.pages ? `<a href="${href(page.page + 1)}" rel="next">next</a>` : "";
  const where = `page ${page.page} of ${page.pages} (${grouped(page.total)} ${plural(page.total, "row")})`;
  return `<p class="pager">${[previous, where, next].filter(Boolean).join(" ")}</p>`;
}

/** The confirmation step of an action posted without one (no script in the browser). */
export function renderConfirmPage(options: {
  campaign: string;
  action: CampaignAction;
  csrf: string;
  boardPath: string;
  nonce: string;
  user?: string;
}): string {
  const { campaign, action } = options;
  const main = `<p>${escapeHtml(action.confirm(campaign))}</p>
<form method="post" action="${campaignPath(campaign)}/actions/${escapeHtml(action.name)}"><input type="hidden" name="csrf" value="${escapeHtml(options.csrf)}"><input type="hidden" name="confirmed" value="yes"><button type="submit">Yes: ${escapeHtml(action.label)}</button></form>
<p><a href="${campaignPath(campaign)}">No, back to the campaign</a></p>`;
  return layout({
    title: `campaign ${campaign}: ${action.name}?`,
    nonce: options.nonce,
    nav: nav(options.boardPath),
    user: options.user,
    main,
  });
}

/** A plain page with one message: an unknown campaign, a refused request. */
export function renderMessagePage(options: {
  title: string;
  message: string;
  boardPath: string;
  nonce: string;
  user?: string;
}): string {
  return layout({
    title: options.title,
    nonce: options.nonce,
    nav: nav(options.boardPath),
    user: options.user,
    main: `<p>${escapeHtml(options.message)}</p>`,
  });
}

/** Asks before each action; once accepted, the form says so and the server runs it. */
const CONFIRM_SCRIPT = `
for (const form of document.querySelectorAll("form[data-confirm]")) {
  form.addEventListener("submit", (event) => {
    if (!confirm(form.dataset.confirm)) {
      event.preventDefault();
      return;
    }
    const confirmed = document.createElement("input");
    confirmed.type = "hidden";
    confirmed.name = "confirmed";
    confirmed.value = "yes";
    form.append(confirmed);
  });
}
`;

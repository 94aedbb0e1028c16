import { escapeHtml } from "./html-escape.js";

export interface LayoutOptions {
  title: string;
  /** Already-escaped HTML of the page's `<main>`. */
  main: string;
  /** Nonce of this response's Content-Security-Policy (see contentSecurityPolicy). */
  nonce: string;
  /** Script run after the page, allowed by the nonce. Never built from data. */
  script?: string;
  /** Already-escaped HTML for the header's navigation. */
  nav?: string;
  /** Extra already-escaped HTML for `<head>`. */
  head?: string;
  /** Already-escaped HTML of who is signed in, at the header's end (login-routes.ts, whoHtml). */
  user?: string;
}

/**
 * The Content-Security-Policy of the dashboard's own pages: no script but the page's own (by
 * nonce), no framing (the action buttons cannot be clicked through another site's page), forms
 * post to this dashboard only.
 */
export function contentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    "style-src 'unsafe-inline'",
    "connect-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");
}

/** A whole page of the dashboard (not bull-board's). */
export function layout(options: LayoutOptions): string {
  const script = options.script
    ? `<script nonce="${escapeHtml(options.nonce)}">${options.script}</script>`
    : "";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(options.title)}</title>
${options.head ?? ""}
<style>${STYLE}</style>
</head>
<body>
<header><h1>${escapeHtml(options.title)}</h1>
<nav>${options.nav ?? ""}</nav>${options.user ? `<div class="who" style="margin-left:auto">${options.user}</div>` : ""}</header>
<main>${options.main}</main>
${script}
</body>
</html>
`;
}

/** A UTC time as `2026-11-23 18:30:05 UTC`, the ISO text kept in `datetime`; `-` when absent. */
export function timeHtml(iso: string | null | undefined): string {
  if (!iso) return "-";
  const shown = `${iso.slice(0, 19).replace("T", " ")} UTC`;
  return `<time datetime="${escapeHtml(iso)}">${escapeHtml(shown)}</time>`;
}

const STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #222; }
header { display: flex; align-items: baseline; gap: 2rem; }
h1 { font-size: 1.4rem; margin: 0 0 1rem; }
h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
table { border-collapse: collapse; }
th, td { padding: .35rem .7rem; border-bottom: 1px solid #ddd; text-align: left; vertical-align: top; }
th { background: #f4f4f4; font-weight: 600; }
td:first-child { white-space: nowrap; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.nw { white-space: nowrap; }
.paused, .stalled, .error { color: #a40000; }
.ok { color: #0a6b00; }
.bar { display: flex; width: 10rem; height: .8rem; background: #e8e8e8; border-radius: 3px; overflow: hidden; }
.bar span { display: block; height: 100%; }
.bar .completed { background: #2e8b57; }
.bar .failed { background: #c0392b; }
.bar .cancelled { background: #999; }
.muted, small { color: #666; }
.actions form { display: inline-block; margin-right: .5rem; }
.actions button { padding: .3rem .8rem; }
.result { padding: .5rem .8rem; border: 1px solid #ccc; margin: 1rem 0; }
/* The rate and ETA beside the bar, or under it when the column is narrow: a running
   campaign's rate must not push the table past a laptop's 1280 px. */
.meter { display: flex; flex-wrap: wrap; align-items: center; gap: .1rem .4rem; }
.meter .bar { flex: none; width: 6.5rem; }
/* Rate and ETA on one line, or one under the other in a narrow column, each whole. */
.speed { font-size: .8rem; }
.speed > span { white-space: nowrap; }
/* Fourteen columns: narrow padding, so the table fits 1280 px beside a running campaign's rate. */
table.campaigns th, table.campaigns td { padding: .35rem .3rem; }
table.campaigns th { font-size: .8rem; }
td.money { font-size: .85rem; }
/* A long name wraps (at its hyphens first) rather than widen the table. */
table.campaigns td:first-child { white-space: normal; overflow-wrap: anywhere; min-width: 7.5rem; }
/* The state, with a pause's short reason or who may approve a held campaign under it. */
td.state-cell { min-width: 7rem; max-width: 11rem; }
td.state-cell .reason, td.state-cell .approver { font-size: .8rem; }
/* Wide enough for a currency's spent and planned price side by side, its budget on the next
   line; only amounts too long for that go one under the other, each whole. */
td.money { min-width: 11rem; }
td.money div { margin-bottom: .2rem; }
td.money small { display: block; }
.amount { white-space: nowrap; }
td.times { white-space: nowrap; font-size: .8rem; }
td.reason { max-width: 28rem; overflow-wrap: anywhere; }
table.failures td { overflow-wrap: anywhere; }
code { overflow-wrap: anywhere; }
.chart { margin: 0 0 1rem; max-width: 100%; }
.chart svg { max-width: 100%; height: auto; }
.chart text { font: 11px system-ui, sans-serif; fill: #555; }
.chart .axis { stroke: #999; stroke-width: 1; }
.chart rect.completed { fill: #2e8b57; }
.chart rect.failed { fill: #c0392b; }
.completed-key { color: #2e8b57; }
.failed-key { color: #c0392b; }
svg.spark polyline { fill: none; stroke: #2e8b57; stroke-width: 1.5; }
dl { display: grid; grid-template-columns: max-content auto; gap: .2rem 1rem; }
dt { font-weight: 600; }
dd { margin: 0; }
`;

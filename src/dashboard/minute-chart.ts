import { escapeHtml } from "./html-escape.js";
import { bucketed, type MinutePoint } from "./minute-history.js";

/** The most bars a chart draws: a campaign of days is bucketed to fit (minute-history.ts). */
const CHART_POINTS = 120;
/** The most points of a sparkline in the campaigns list. */
const SPARK_POINTS = 40;

const W = 640;
const H = 140;
const LEFT = 48;
const BOTTOM = 20;
const TOP = 8;

/**
 * A campaign's rows per minute over its life as an inline SVG drawn here (no script, nothing
 * fetched: the page's Content-Security-Policy allows neither): completed and failed rows
 * stacked, one bar per bucket, the peak on the y axis, the first and last minute on the x axis.
 * `until`: now for a running campaign, so the quiet minutes up to now show.
 */
export function minuteChart(points: MinutePoint[], until?: number): string {
  if (points.length === 0)
    return `<p class="muted chart-empty">No row has ended yet: the chart of rows per minute starts with the first.</p>`;
  const { points: buckets, minutes } = bucketed(points, CHART_POINTS, until);
  const peak = Math.max(...buckets.map((b) => b.completed + b.failed), 1);
  const plotW = W - LEFT - 4;
  const plotH = H - TOP - BOTTOM;
  const barW = plotW / buckets.length;
  const y = (v: number) => (v / peak) * plotH;
  const bars = buckets.map((b, i) => {
    const x = (LEFT + i * barW).toFixed(2);
    const w = Math.max(barW - (barW > 3 ? 1 : 0), 0.5).toFixed(2);
    const hc = y(b.completed);
    const hf = y(b.failed);
    const rect = (cls: string, top: number, h: number) =>
      h > 0
        ? `<rect class="${cls}" x="${x}" y="${top.toFixed(2)}" width="${w}" height="${h.toFixed(2)}"/>`
        : "";
    const base = TOP + plotH;
    return rect("completed", base - hc, hc) + rect("failed", base - hc - hf, hf);
  });
  const label = `Rows per minute: peak ${round(peak)}${minutes > 1 ? `, each bar ${minutes} minutes` : ""}`;
  const first = buckets[0]!.at;
  const last = buckets.at(-1)!.at;
  return `<figure class="chart">
<svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${escapeHtml(label)}">
<title>${escapeHtml(label)}</title>
<line class="axis" x1="${LEFT}" y1="${TOP + plotH}" x2="${W - 4}" y2="${TOP + plotH}"/>
<line class="axis" x1="${LEFT}" y1="${TOP}" x2="${LEFT}" y2="${TOP + plotH}"/>
<text x="${LEFT - 4}" y="${TOP + 10}" text-anchor="end">${escapeHtml(round(peak))}</text>
<text x="${LEFT - 4}" y="${TOP + plotH}" text-anchor="end">0</text>
<text x="${LEFT}" y="${H - 4}">${escapeHtml(clock(first))}</text>
<text x="${W - 4}" y="${H - 4}" text-anchor="end">${escapeHtml(clock(last))}</text>
${bars.join("")}
</svg>
<figcaption><small>${escapeHtml(label)} (UTC; <span class="completed-key">completed</span>, <span class="failed-key">failed</span>)</small></figcaption>
</figure>`;
}

/** A small line of a campaign's rows per minute for the campaigns list; empty without points. */
export function sparkline(points: MinutePoint[], until?: number): string {
  if (points.length === 0) return "";
  const { points: buckets, minutes } = bucketed(points, SPARK_POINTS, until);
  const w = 80;
  const h = 18;
  const peak = Math.max(...buckets.map((b) => b.completed + b.failed), 1);
  const step = buckets.length > 1 ? w / (buckets.length - 1) : 0;
  const xy = buckets.map(
    (b, i) =>
      `${(i * step).toFixed(1)},${(h - 1 - ((b.completed + b.failed) / peak) * (h - 2)).toFixed(1)}`,
  );
  if (xy.length === 1) xy.push(`${w},${xy[0]!.split(",")[1]}`);
  const label = `rows per minute, peak ${round(peak)}${minutes > 1 ? ` (${minutes}-minute steps)` : ""}`;
  return `<svg class="spark" viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" role="img" aria-label="${escapeHtml(label)}"><title>${escapeHtml(label)}</title><polyline points="${xy.join(" ")}"/></svg>`;
}

function round(n: number): string {
  return n >= 10 ? String(Math.round(n)) : String(Math.round(n * 10) / 10);
}

/** `11-25 14:05` (UTC). */
function clock(ms: number): string {
  return new Date(ms).toISOString().slice(5, 16).replace("T", " ");
}

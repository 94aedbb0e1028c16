import { stringify } from "csv-stringify/sync";
import { apiKeyFingerprint } from "../../api/client.js";
import { firstThenAmend, planFirst } from "../../audit/audited.js";
import type { AuditDetails } from "../../audit/entry.js";
import { requireCampaign } from "../../campaigns/find-campaign.js";
import type { LookupPace } from "../../campaigns/lookups.js";
import {
  type PayoutsResult,
  refreshPayouts,
  UNCLAIMED_COLUMNS,
  unclaimedRows,
} from "../../campaigns/payouts.js";
import {
  type LedgerOrderEntry,
  type LookalikeEntry,
  type OrderClasses,
  type OtherOrders,
  type PaidAgainEntry,
  type PaidAgainItem,
  type ReconcileReport,
  reconcileCampaign,
  reconcileShortfall,
  type ServiceOrderEntry,
} from "../../campaigns/reconcile.js";
import { plural } from "../../plural.js";
import { auditedCommand } from "../audit-trail.js";
import { type Progress, progressBar } from "../progress.js";
import { createContext, printJson } from "../run-action.js";
import { withServices } from "../services.js";

function pace(rate: number | undefined): LookupPace {
  return rate === undefined ? {} : { perMinute: rate };
}

/** `orders reconcile`: exit 1 on any disagreement. */
export async function runReconcile(opts: {
  campaign: string;
  rate?: number;
  minAge?: number;
  json?: boolean;
}): Promise<number> {
  const ctx = createContext(opts.json);
  return withServices(ctx.config, async ({ ledger, client, stores }) => {
    await requireCampaign(ledger, opts.campaign);
    const bar = progressBar(ctx.interactive, "reconcile |{bar}| {value}/{total} {what}");
    let report: ReconcileReport;
    try {
      // Recorded: it settles failed_uncertain rows. The entry is written with the plan, before
      // the first settlement; a second one, refused, when the ledger then refuses some of them
      // (docs/architecture/audit.md, "An entry before its effect").
      report = await auditedCommand(
        ctx.config,
        {
          action: "reconcile",
          campaign: opts.campaign,
          run: (first) =>
            planFirst(
              firstThenAmend(
                (plan) => first(reconcileDetails(plan)),
                reconcileShortfall,
                reconcileDetails,
              ),
              (beforeSettle) =>
                reconcileCampaign(ledger, client, opts.campaign, {
                  apiKey: apiKeyFingerprint(ctx.config.apiKey),
                  dataDir: ctx.config.dataDir,
                  pace: pace(opts.rate),
                  ...(opts.minAge !== undefined ? { minAgeMs: opts.minAge * 60_000 } : {}),
                  onProgress: ({ phase, done, total }) => {
                    bar.setTotal(phase === "listing" ? done : total);
                    bar.update(done, { what: phase === "listing" ? "pages" : "orders read" });
                  },
                  beforeSettle,
                }),
            ),
          done: reconcileDetails,
        },
        { stores },
      );
    } finally {
      bar.stop();
    }
    if (opts.json) printJson(report);
    else process.stdout.write(reconcileText(report));
    return report.agree ? 0 : 1;
  });
}

/** What the audit keeps of a reconcile: counts, and how its failed_uncertain rows settled. */
function reconcileDetails(r: ReconcileReport): AuditDetails {
  const settled: Record<string, number> = {};
  for (const u of r.uncertain) settled[u.outcome] = (settled[u.outcome] ?? 0) + 1;
  return {
    agree: r.agree,
    service_orders: r.service_orders,
    unknown_to_ledger: r.unknown_to_ledger.length,
    missing_on_service: r.missing_on_service.length,
    status_disagreements: r.status_disagreements.length,
    lookalikes: r.lookalikes.length,
    suspects: r.suspects.length,
    repeats: r.repeats.length,
    uncertain_settled: settled,
  };
}

function lines(entry: { lines?: number[] }): string {
  return entry.lines?.length ? `, lines ${entry.lines.join(" ")}` : "";
}

function serviceLine(e: ServiceOrderEntry): string {
  const ledger =
    e.ledger_order !== undefined ? ` (ledger order ${e.ledger_order}, ${e.ledger_status})` : "";
  const what = [e.order_id, e.status, e.created_at, e.total_price, e.currency].filter(Boolean);
  return `    ${what.join(" ")}: ${e.why}${ledger}${lines(e)}\n`;
}

function ledgerLine(e: LedgerOrderEntry): string {
  const service = e.service_status ?? "unknown to the service";
  const statuses = `ledger ${e.ledger_status}, service ${service}`;
  return `    order ${e.ledger_order} ${e.order_id}: ${statuses}${lines(e)}\n`;
}

/** The rows an item pays again, by status. */
function paidRowsText(item: PaidAgainItem): string {
  const byStatus = new Map<string, number[]>();
  for (const row of item.rows)
    byStatus.set(row.status, [...(byStatus.get(row.status) ?? []), row.line]);
  const parts = [...byStatus].map(
    ([status, numbers]) => `${status}: line${numbers.length > 1 ? "s" : ""} ${numbers.join(" ")}`,
  );
  const hidden = item.rows_count - item.rows.length;
  if (hidden > 0) parts.push(`${hidden} more`);
  return parts.join("; ");
}

/** One order paying rows again: what it is, who made it, then each item and its rows. */
function paidAgainLines(e: LookalikeEntry | PaidAgainEntry): string {
  const what = [e.order_id, e.status, e.created_at, e.total_price, e.currency].filter(Boolean);
  const by = "campaign" in e ? ` (made by campaign ${e.campaign})` : "";
  const items = e.items.map((item) => {
    const to = [item.product, item.face_value, item.distribution, item.email].filter(Boolean);
    const rows = `${item.rows_count} ${plural(item.rows_count, "row")}`;
    return `      ${to.join(" ")} pays again ${rows}: ${paidRowsText(item)}\n`;
  });
  return `    ${what.join(" ")}${by}\n${items.join("")}`;
}

function perCampaign(counts: Record<string, number>): string {
  return Object.entries(counts)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, n]) => `${name} ${n}`)
    .join(", ");
}

/** One line counting each class of the window's orders. */
function classesLine(c: OrderClasses): string {
  const others = Object.values(c.other_campaigns).reduce((sum, n) => sum + n, 0);
  const parts = [`this campaign's ${c.campaign}`];
  if (others > 0) parts.push(`other campaigns' ${others} (${perCampaign(c.other_campaigns)})`);
  if (c.repeats > 0) parts.push(`deliberate repeats ${c.repeats}`);
  if (c.suspects > 0) parts.push(`suspects ${c.suspects}`);
  if (c.lookalikes > 0) parts.push(`look-alikes ${c.lookalikes}`);
  if (c.others > 0) parts.push(`other orders ${c.others}`);
  if (c.unidentified > 0) parts.push(`still PROCESSING ${c.unidentified}`);
  return `  orders of the window: ${parts.join(", ")}\n`;
}

/** Deliberate repeats: counted per campaign that made them, no disagreement. */
function repeatsLine(repeats: PaidAgainEntry[]): string {
  if (repeats.length === 0) return "";
  const counts: Record<string, number> = {};
  for (const e of repeats) counts[e.campaign] = (counts[e.campaign] ?? 0) + 1;
  return (
    `  deliberate repeats (recorded with --allow-repeats; no disagreement): ${repeats.length} ` +
    `(${perCampaign(counts)})\n`
  );
}

function otherOrdersLine(o: OtherOrders): string {
  if (o.count === 0) return "";
  const totals = Object.entries(o.totals).map(([currency, total]) => `${currency} ${total}`);
  const failed = o.failed > 0 ? [`${o.failed} FAILED`] : [];
  const detail = [...totals, ...failed].join(", ");
  return `  other orders of the account in the window: ${o.count}${detail ? ` (${detail})` : ""}\n`;
}

function section<T>(title: string, entries: T[], line: (entry: T) => string): string {
  if (entries.length === 0) return "";
  return `  ${title}: ${entries.length}\n${entries.map(line).join("")}`;
}

function reconcileText(r: ReconcileReport): string {
  return (
    `campaign ${r.campaign}: ${r.service_orders} orders of the service since ` +
    `${r.window.from} (${r.pages} pages, ${r.requests} requests)\n` +
    classesLine(r.classes) +
    section("orders the ledger does not know", r.unknown_to_ledger, serviceLine) +
    section(
      "SUSPECTS (orders of other campaigns paying rows of this one again, not recorded as repeats; check them before any retry)",
      r.suspects,
      paidAgainLines,
    ) +
    section(
      "POSSIBLE DUPLICATES (untagged orders paying a recipient of the campaign the same card; check them before any retry)",
      r.lookalikes,
      paidAgainLines,
    ) +
    repeatsLine(r.repeats) +
    section("ledger orders the service does not have", r.missing_on_service, ledgerLine) +
    section("status disagreements", r.status_disagreements, ledgerLine) +
    section("behind (a follower will record them)", r.behind, ledgerLine) +
    section("failed_uncertain orders", r.uncertain, (u) => {
      const id = u.order_id ? ` ${u.order_id}` : "";
      const why = u.why ? ` (${u.why})` : "";
      return `    order ${u.ledger_order}: ${u.outcome}${id}${why}${lines(u)}\n`;
    }) +
    (r.unidentified.length
      ? `  still PROCESSING, not identified: ${r.unidentified.join(" ")}\n`
      : "") +
    otherOrdersLine(r.other_orders) +
    (r.agree ? "  the service and the ledger agree\n" : "  DISAGREEMENT: see above\n")
  );
}

/** `orders payouts`: exit 1 when an order's links could not be read. */
export async function runPayouts(opts: {
  campaign: string;
  unclaimed?: boolean;
  rate?: number;
  json?: boolean;
}): Promise<number> {
  const ctx = createContext(opts.json);
  return withServices(ctx.config, async ({ ledger, client }) => {
    await requireCampaign(ledger, opts.campaign);
    const bar: Progress = progressBar(
      ctx.interactive,
      "payouts |{bar}| {value}/{total} orders read",
    );
    let result: PayoutsResult;
    try {
      result = await refreshPayouts(ledger, client, opts.campaign, {
        pace: pace(opts.rate),
        onProgress: (done, total) => {
          bar.setTotal(total);
          bar.update(done);
        },
      });
    } finally {
      bar.stop();
    }
    for (const f of result.failed)
      process.stderr.write(
        `giftjobs: order ${f.ledger_order} (${f.order_id}) not read: ${f.error}\n`,
      );
    if (opts.unclaimed) await printUnclaimed(ledger, opts.campaign, opts.json);
    else if (opts.json) printJson(result);
    else process.stdout.write(payoutsText(result));
    return result.failed.length > 0 ? 1 : 0;
  });
}

function payoutsText(r: PayoutsResult): string {
  const statuses = Object.entries(r.by_status)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([status, n]) => `${status} ${n}`)
    .join(", ");
  const read = `payouts of ${r.rows} ${plural(r.rows, "row")} in ${r.orders} ${plural(r.orders, "order")} read`;
  return `campaign ${r.campaign}: ${read}${statuses ? `: ${statuses}` : ""}\n`;
}

async function printUnclaimed(
  ledger: Parameters<typeof unclaimedRows>[0],
  campaign: string,
  json: boolean | undefined,
): Promise<void> {
  const rows = await unclaimedRows(ledger, campaign);
  if (json) {
    const objects = rows.map((cells) =>
      Object.fromEntries(UNCLAIMED_COLUMNS.map((name, i) => [name, cells[i]])),
    );
    printJson({ campaign, rows: objects });
    return;
  }
  process.stdout.write(stringify(rows, { header: true, columns: [...UNCLAIMED_COLUMNS] }));
}

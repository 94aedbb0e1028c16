import { stringify } from "csv-stringify/sync";
import type { AuditEntry, AuditFilter } from "../../audit/entry.js";
import { canonicalJson } from "../../audit/entry.js";
import { openAuditTrail } from "../../audit/trail-for-config.js";
import { neutralise } from "../../campaigns/report.js";
import { createContext, printJson } from "../run-action.js";

/** The columns of `audit --csv`. */
const CSV_COLUMNS = [
  "seq",
  "at",
  "actor",
  "source",
  "where",
  "action",
  "campaign",
  "result",
  "reason",
  "details",
  "prev",
  "hash",
] as const;

/** `audit`: the entries, oldest first (docs/commands.md, "The audit trail"). */
export async function runAudit(opts: {
  campaign?: string;
  since?: Date;
  actor?: string;
  json?: boolean;
  csv?: boolean;
}): Promise<number> {
  const ctx = createContext(opts.json || opts.csv);
  const filter: AuditFilter = { campaign: opts.campaign, since: opts.since, actor: opts.actor };
  const trail = await openAuditTrail(ctx.config);
  let entries: AuditEntry[];
  try {
    entries = await trail.list(filter);
  } finally {
    await trail.close();
  }
  if (opts.json) printJson(entries);
  else if (opts.csv) process.stdout.write(auditCsv(entries));
  else process.stdout.write(auditText(entries));
  return 0;
}

/**
 * `audit verify`: exit 0 with a one-line summary, 1 naming the first break. Its `--json` may be
 * read by `audit`, which has one too: commander hands an option to the first command that knows it.
 */
export async function runVerify(
  own: { json?: boolean },
  command?: { optsWithGlobals(): { json?: boolean } },
): Promise<number> {
  const opts = { json: own.json ?? command?.optsWithGlobals().json };
  const ctx = createContext(opts.json);
  const trail = await openAuditTrail(ctx.config);
  try {
    const result = await trail.verify();
    if (opts.json) printJson({ place: trail.place, ...result });
    if (!result.ok) {
      process.stderr.write(`giftjobs: audit trail broken (${trail.place}): ${result.problem}\n`);
      return 1;
    }
    if (!opts.json)
      process.stdout.write(
        result.last
          ? `audit trail whole: ${result.entries} entries, the last (${result.last.seq}) at ${result.last.at}, in ${trail.place}\n`
          : `audit trail empty: no entries in ${trail.place}\n`,
      );
    return 0;
  } finally {
    await trail.close();
  }
}

export function auditCsv(entries: AuditEntry[]): string {
  const rows = entries.map((e) =>
    [
      String(e.seq),
      e.at,
      e.actor,
      e.source,
      e.where,
      e.action,
      e.campaign ?? "",
      e.result,
      e.reason ?? "",
      canonicalJson(e.details),
      e.prev,
      e.hash,
    ].map(neutralise),
  );
  return stringify([[...CSV_COLUMNS], ...rows]);
}

/** One line per entry: number, time, who and from where, what, on which campaign, how it ended. */
export function auditText(entries: AuditEntry[]): string {
  if (entries.length === 0) return "no audit entries\n";
  return entries
    .map((e) => {
      const result = e.result === "ok" ? "ok" : `${e.result}: ${e.reason ?? ""}`;
      const details = detailsText(e.details);
      return `${e.seq}  ${e.at}  ${e.actor} (${e.source}, ${e.where})  ${e.action}${e.campaign ? ` ${e.campaign}` : ""}  ${result}${details ? `  ${details}` : ""}\n`;
    })
    .join("");
}

/** `rows=3 money.USD.price=30.00`: the details, flattened. */
export function detailsText(details: AuditEntry["details"]): string {
  const parts: string[] = [];
  const walk = (value: unknown, path: string) => {
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value)) walk(v, path ? `${path}.${k}` : k);
    } else parts.push(`${path}=${Array.isArray(value) ? value.join(",") : String(value)}`);
  };
  walk(details, "");
  return parts.join(" ");
}

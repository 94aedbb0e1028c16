import { stringify } from "csv-stringify/sync";
import type { AuditEntry, AuditFilter } from "../../audit/entry.js";
import { canonicalJson } from "../../audit/entry.js";
import { campaignWithoutImport, type KnownCampaigns } from "../../audit/unentered.js";
import type { VerifyResult } from "../../audit/verify.js";
import { neutralise } from "../../campaigns/report.js";
import type { Config } from "../../config.js";
import { UserError } from "../../errors/user-error.js";
import { Ledger } from "../../ledger/ledger.js";
import { commandClient } from "../../redis/connection.js";
import { openStores, type Stores } from "../../stores/stores.js";
import { createContext, printJson } from "../run-action.js";
import { withRedis } from "../services.js";

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
  /** false with --no-verify: the entries as stored, the chain not checked. */
  verify?: boolean;
}): Promise<number> {
  const ctx = createContext(opts.json || opts.csv);
  const filter: AuditFilter = { campaign: opts.campaign, since: opts.since, actor: opts.actor };
  const stores = await openStores(ctx.config, { max: 1 });
  const trail = stores.audit;
  let entries: AuditEntry[];
  try {
    if (opts.verify === false) entries = await trail.list(filter);
    else {
      // Reading is verifying (docs/architecture/audit.md): a broken trail is not shown as true.
      const read = await trail.read(filter);
      if (!read.check.ok) {
        process.stderr.write(
          `giftjobs: audit trail broken (${trail.place}): ${read.check.problem}; nothing listed (giftjobs audit --no-verify lists the entries as stored)\n`,
        );
        return 1;
      }
      entries = read.entries;
    }
  } finally {
    await stores.close();
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
  const stores = await openStores(ctx.config, { max: 1 });
  const trail = stores.audit;
  try {
    const result = await withCampaignsChecked(ctx.config, stores, await trail.verify());
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
    await stores.close();
  }
}

/**
 * A whole chain is checked against the campaigns too: each of the ledger's and of the order
 * journal's has an import entry (src/audit/unentered.ts). Redis away: the ledger's are not
 * checked, said in one line; the journal's still are.
 */
async function withCampaignsChecked(
  config: Config,
  stores: Stores,
  result: VerifyResult,
): Promise<VerifyResult> {
  if (!result.ok) return result;
  const known: KnownCampaigns[] = [];
  try {
    const names = await withRedis(config, (redis) =>
      new Ledger(commandClient(redis), config.prefix).campaigns.names(),
    );
    known.push({ where: "the ledger", names });
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    process.stderr.write(
      `giftjobs: warning: ${error.message}; the ledger's campaigns are not checked for their import entries\n`,
    );
  }
  known.push({ where: "the order journal", names: await stores.journal.campaigns() });
  const problem = campaignWithoutImport(await stores.audit.list(), known);
  return problem ? { ok: false, entries: result.entries, problem } : result;
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

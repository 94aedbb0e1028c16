import { basename } from "node:path";
import type { Actor } from "../audit/actor.js";
import type { AuditDetails, AuditDraft } from "../audit/entry.js";
import { UserError } from "../errors/user-error.js";
import { maskEmails, redactSecrets } from "../log.js";
import { budgetText } from "../orders/budget.js";
import type { ImportEnd } from "./import-command.js";
import type { ImportNamed } from "./import-flags.js";
import type { ImportResult } from "./import-types.js";

/** One entry's parts: what the import names, who ran it, the file's sha256 when read. */
interface EntryOf {
  named: ImportNamed;
  actor: Actor;
  fileSha256: string | undefined;
}

/**
 * The entry written before anything is recorded (docs/architecture/audit.md, "An entry before
 * its effect"): what the import is about to record and may spend, `ok`. Its `new_rows` and
 * `money` are the plan; the orders they make are counted as they are written, so they are not
 * in it. An import that then records otherwise gets a second entry (importEndDraft).
 */
export function importPlannedDraft(
  { named, actor, fileSha256 }: EntryOf,
  planned: ImportResult,
): AuditDraft {
  const { orders: _counted, ...details } = resultDetails(planned);
  return {
    actor,
    action: "import",
    campaign: named.campaign,
    details: { ...fileDetails(named, fileSha256), ...details },
    result: "ok",
  };
}

/**
 * True when the planned entry says how the import ended (it recorded the rows it planned): no
 * second entry. A refusal, a decline, Redis lost or a budget met half way get their own.
 */
export function saidByPlanned(end: ImportEnd, planned: ImportResult | undefined): boolean {
  return Boolean(planned && end.kind === "imported" && end.result.enqueued === planned.enqueued);
}

/**
 * The entry of an import stopped by an error of its own before it ended as importAuditDraft
 * knows: the file missing, empty or unreadable, no snapshot, the API key refused, a bad flag.
 * `refused` for a user's mistake (exit 2), `failed` otherwise; the reason is the command's one
 * line, the API key and any e-mail address out of it.
 */
export function importStoppedDraft(
  { named, actor, fileSha256 }: EntryOf,
  error: unknown,
): AuditDraft {
  const message = error instanceof Error ? error.message : String(error);
  return {
    actor,
    action: "import",
    campaign: named.campaign,
    details: fileDetails(named, fileSha256),
    result: error instanceof UserError ? "refused" : "failed",
    reason: maskEmails(redactSecrets(message.split("\n")[0]!)),
  };
}

function fileDetails(command: ImportNamed, fileSha256: string | undefined): AuditDetails {
  return {
    file: basename(command.file),
    file_sha256: fileSha256 ?? null,
    ...(command.append ? { append: true } : {}),
    ...(command.budgets.length ? { budgets: command.budgets.map(budgetText) } : {}),
  };
}

/**
 * The audit entry of an import that ran (docs/architecture/audit.md, "What is recorded"): the
 * file's name and sha256, the rows, the money per currency, the budgets given, and how it
 * ended. Counts and money only: no row's e-mail or reference. A dry run records nothing.
 */
export function importAuditDraft(
  { named: command, actor, fileSha256 }: EntryOf,
  end: ImportEnd,
): AuditDraft | undefined {
  const result =
    "result" in end ? end.result : end.kind === "refused" ? end.error.result : undefined;
  if (result?.dry_run) return undefined;
  const details: AuditDetails = {
    ...fileDetails(command, fileSha256),
    ...(result ? resultDetails(result) : {}),
  };
  const base = { actor, action: "import" as const, campaign: command.campaign, details };
  switch (end.kind) {
    case "imported":
      return { ...base, result: "ok" };
    case "declined":
      return { ...base, result: "refused", reason: end.message };
    case "refused":
      return { ...base, result: "refused", reason: end.error.message.split("\n")[0]! };
    case "redis_lost":
      return { ...base, result: "failed", reason: end.line.replace(/^giftjobs: /, "") };
  }
}

function resultDetails(r: ImportResult): AuditDetails {
  return {
    rows: r.rows,
    valid: r.valid,
    invalid: r.invalid,
    new_rows: r.enqueued,
    already_known: r.already_known,
    orders: r.orders,
    money: Object.fromEntries(
      Object.entries(r.totals).map(([c, t]) => [
        c,
        { face_value: t.face_value, price: t.price, rows: t.rows },
      ]),
    ),
    state: r.state ?? null,
    ...(r.four_eyes ? { four_eyes: r.four_eyes } : {}),
    ...(r.budgets_replaced?.length
      ? { budgets_replaced: r.budgets_replaced.map((b) => ({ ...b })) }
      : {}),
  };
}

import { basename } from "node:path";
import type { Actor } from "../audit/actor.js";
import type { AuditDetails, AuditDraft } from "../audit/entry.js";
import { budgetText } from "../orders/budget.js";
import type { ImportEnd, PreparedImport } from "./import-command.js";
import type { ImportResult } from "./import-types.js";

/**
 * The audit entry of an import that ran (docs/architecture/audit.md, "What is recorded"): the
 * file's name and sha256, the rows, the money per currency, the budgets given, and how it
 * ended. Counts and money only: no row's e-mail or reference. A dry run records nothing.
 */
export function importAuditDraft(
  prepared: PreparedImport,
  end: ImportEnd,
  actor: Actor,
  fileSha256: string | undefined,
): AuditDraft | undefined {
  const { command } = prepared;
  const result =
    "result" in end ? end.result : end.kind === "refused" ? end.error.result : undefined;
  if (result?.dry_run) return undefined;
  const details: AuditDetails = {
    file: basename(command.file),
    file_sha256: fileSha256 ?? null,
    ...(command.append ? { append: true } : {}),
    ...(command.budgets.length ? { budgets: command.budgets.map(budgetText) } : {}),
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

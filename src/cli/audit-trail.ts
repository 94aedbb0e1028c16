import { currentActor } from "../audit/actor.js";
import { type AuditedStep, audited } from "../audit/audited.js";
import type { AuditDraft } from "../audit/entry.js";
import type { AuditTrail } from "../audit/trail.js";
import type { Config } from "../config.js";
import { UserError } from "../errors/user-error.js";
import { openStores, type Stores } from "../stores/stores.js";

/** How a command goes on when PostgreSQL, the trail's place, is away or refuses. */
export type WithoutTrail = "refuse" | "warn";

/**
 * Runs `step` of a command and records it in the audit trail (src/audit/audited.ts), the
 * trail opened first: an action that must be recorded is not done when it cannot be. `warn`:
 * the command goes on after one warning line when PostgreSQL is away or refuses (pause and
 * cancel, which stop spending, must work during an outage: docs/operations.md, "PostgreSQL
 * down"); `refuse` (the default): its error is the command's. `stores`: the command's, when it
 * has them open already; else the trail's are opened for it (one connection) and closed after.
 */
export async function auditedCommand<T>(
  config: Config,
  step: AuditedStep<T>,
  options: { without?: WithoutTrail; stores?: Stores } = {},
): Promise<T> {
  const actor = currentActor();
  const opened = await openTrail(config, options, step.action);
  try {
    return await audited(opened?.trail, actor, step);
  } finally {
    await opened?.close();
  }
}

/** Appends one entry (an import's, whose end is known only after it ran). */
export async function appendEntry(
  config: Config,
  draft: AuditDraft,
  stores?: Stores,
): Promise<void> {
  const opened = await trailOf(config, stores);
  try {
    await opened.trail.append(draft);
  } finally {
    await opened.close();
  }
}

/** The trail of `stores`, or of stores opened for it (one connection) that close() closes. */
async function trailOf(
  config: Config,
  stores: Stores | undefined,
): Promise<{ trail: AuditTrail; close(): Promise<void> }> {
  if (stores) return { trail: stores.audit, close: async () => {} };
  const own = await openStores(config, { max: 1 });
  return { trail: own.audit, close: () => own.close() };
}

async function openTrail(
  config: Config,
  options: { without?: WithoutTrail; stores?: Stores },
  action: string,
): Promise<{ trail: AuditTrail; close(): Promise<void> } | undefined> {
  try {
    return await trailOf(config, options.stores);
  } catch (error) {
    if (options.without !== "warn" || !(error instanceof UserError)) throw error;
    process.stderr.write(
      `giftjobs: warning: the audit trail cannot be written (${error.message}); this ${action} goes on unrecorded\n`,
    );
    return undefined;
  }
}

import { currentActor } from "../audit/actor.js";
import { type AuditedStep, audited } from "../audit/audited.js";
import type { AuditDraft } from "../audit/entry.js";
import type { AuditTrail } from "../audit/trail.js";
import { openAuditTrail } from "../audit/trail-for-config.js";
import type { Config } from "../config.js";
import type { Database } from "../db/open-database.js";
import { UserError } from "../errors/user-error.js";

/** How a command goes on when PostgreSQL, the trail's place, is away or refuses. */
export type WithoutTrail = "refuse" | "warn";

/**
 * Runs `step` of a command and records it in the audit trail (src/audit/audited.ts), the
 * trail opened first: an action that must be recorded is not done when it cannot be. `warn`:
 * the command goes on after one warning line when PostgreSQL is away or refuses (pause and
 * cancel, which stop spending, must work during an outage: docs/operations.md, "PostgreSQL
 * down"); `refuse` (the default): its error is the command's.
 */
export async function auditedCommand<T>(
  config: Config,
  step: AuditedStep<T>,
  options: { without?: WithoutTrail; database?: Database } = {},
): Promise<T> {
  const actor = currentActor();
  const trail = await openTrail(config, options, step.action);
  try {
    return await audited(trail, actor, step);
  } finally {
    await trail?.close();
  }
}

/** Appends one entry (an import's, whose end is known only after it ran). */
export async function appendEntry(
  config: Config,
  draft: AuditDraft,
  database?: Database,
): Promise<void> {
  const trail = await openAuditTrail(config, database);
  try {
    await trail.append(draft);
  } finally {
    await trail.close();
  }
}

async function openTrail(
  config: Config,
  options: { without?: WithoutTrail; database?: Database },
  action: string,
): Promise<AuditTrail | undefined> {
  try {
    return await openAuditTrail(config, options.database);
  } catch (error) {
    if (options.without !== "warn" || !(error instanceof UserError)) throw error;
    process.stderr.write(
      `giftjobs: warning: the audit trail cannot be written (${error.message}); this ${action} goes on unrecorded\n`,
    );
    return undefined;
  }
}

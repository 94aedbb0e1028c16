// The other half of `audit verify` (docs/architecture/audit.md, "Verify"): a campaign that can
// spend (the ledger's in Redis) or that spent (the order journal's) has an import entry.
import type { AuditEntry } from "./entry.js";

/** Campaigns known to a store, by where they were found. */
export interface KnownCampaigns {
  /** `the ledger` or `the order journal`, for the message. */
  where: string;
  names: readonly string[];
}

/**
 * The first campaign of `known` that no `import` entry recorded as done names (an import
 * writes one before it records anything: "An entry before its effect"), as the line verify
 * prints; undefined when each has one.
 */
export function campaignWithoutImport(
  entries: readonly AuditEntry[],
  known: readonly KnownCampaigns[],
): string | undefined {
  const imported = new Set(
    entries.filter((e) => e.action === "import" && e.result === "ok").map((e) => e.campaign),
  );
  for (const { where, names } of known)
    for (const name of names)
      if (!imported.has(name))
        return `campaign ${name} of ${where} has no import entry: its rows were recorded without the trail (an import by the library, or its entry removed)`;
  return undefined;
}

import type { Actor } from "../audit/actor.js";
import { UserError } from "../errors/user-error.js";
import type { CampaignMeta } from "../ledger/types.js";

/**
 * The campaign meta fields of the four-eyes rule (docs/architecture/audit.md, "Four eyes"):
 * `four_eyes` says which price passed GIFTJOBS_APPROVAL_THRESHOLD at import (`USD 1500.00 over
 * 1000.00`); `imported_by` is a JSON array of the actors who recorded rows since the campaign
 * last ran; `approved_by` who approved it last.
 */
export const FOUR_EYES_FIELDS = {
  rule: "four_eyes",
  importers: "imported_by",
  approver: "approved_by",
} as const;

/** The dashboard's name for a request that came with the one shared token, no person's. */
export const SHARED_DASHBOARD_NAME = "dashboard";

type FourEyesMeta = CampaignMeta & Partial<Record<string, string>>;

/** Who recorded rows of the campaign since it last ran. */
export function importersOf(meta: CampaignMeta): string[] {
  const text = (meta as FourEyesMeta)[FOUR_EYES_FIELDS.importers];
  if (!text) return [];
  try {
    const names = JSON.parse(text) as unknown;
    return Array.isArray(names) ? names.filter((n): n is string => typeof n === "string") : [];
  } catch {
    return [];
  }
}

/** The importers with `name` added (once), as the meta field's text. */
export function withImporter(meta: CampaignMeta | undefined, name: string): string {
  const names = meta ? importersOf(meta) : [];
  return JSON.stringify(names.includes(name) ? names : [...names, name]);
}

/**
 * Refuses (UserError, exit 2) the approval of a campaign held by the four-eyes rule by one of
 * the actors who imported its rows, or by the dashboard's shared token, which names nobody.
 */
export function checkFourEyes(campaign: string, meta: CampaignMeta, approver: Actor): void {
  const rule = (meta as FourEyesMeta)[FOUR_EYES_FIELDS.rule];
  if (!rule) return;
  const rest = `campaign ${campaign} is held by the four-eyes rule (GIFTJOBS_APPROVAL_THRESHOLD: its price ${rule})`;
  if (approver.source === "dashboard" && approver.name === SHARED_DASHBOARD_NAME)
    throw new UserError(
      `${rest}: the dashboard's shared token names no person; approve it as a named user, or with giftjobs orders approve`,
    );
  if (importersOf(meta).includes(approver.name))
    throw new UserError(
      `${rest}: ${approver.name} imported it, so someone else must approve it (four eyes)`,
    );
}

import { type Actor, actorKey, sameActor } from "../audit/actor.js";
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
const SHARED_DASHBOARD_NAME = "dashboard";

type FourEyesMeta = CampaignMeta & Partial<Record<string, string>>;

/** Who recorded rows of the campaign since it last ran. */
function importersOf(meta: CampaignMeta): string[] {
  const text = (meta as FourEyesMeta)[FOUR_EYES_FIELDS.importers];
  if (!text) return [];
  try {
    const names = JSON.parse(text) as unknown;
    return Array.isArray(names) ? names.filter((n): n is string => typeof n === "string") : [];
  } catch {
    return [];
  }
}

/** The four-eyes rule a campaign holds and who imported it, or undefined without a rule. */
export function fourEyesHold(
  meta: CampaignMeta,
): { rule: string; importers: string[] } | undefined {
  const rule = (meta as FourEyesMeta)[FOUR_EYES_FIELDS.rule];
  return rule ? { rule, importers: importersOf(meta) } : undefined;
}

/**
 * A four-eyes rule as a sentence says it: the campaign's own price (`USD 1500.00 over 1000.00`,
 * led by its currency) is "its price ...", its importer's day
 * (`alice's imports of 2026-11-28: ...`, src/import/four-eyes-hold.ts) says itself.
 */
export function fourEyesRuleWords(rule: string): string {
  return /^[A-Z]{3} /.test(rule) ? `its price ${rule}` : rule;
}

/**
 * Who may approve a held campaign, in the words the dashboard's campaigns list and the
 * campaign's page both show (docs/architecture/audit.md, "Four eyes"): held by the four-eyes
 * rule (`importers` given), a user of the users file with the approve role, not one who imported
 * it; held without it, whoever may approve at all.
 */
export function whoMayApprove(importers: readonly string[] | undefined): string {
  if (!importers)
    return "anyone may approve it with giftjobs orders approve, or a dashboard user with the approve role";
  const not = importers.length ? `, not ${importers.join(" or ")} (who imported it)` : "";
  return `a user of the users file with the approve role may approve it${not}`;
}

/** The importers with `name` added (once), as the meta field's text. */
export function withImporter(meta: CampaignMeta | undefined, name: string): string {
  const names = meta ? importersOf(meta) : [];
  return JSON.stringify(names.some((n) => sameActor(n, name)) ? names : [...names, name]);
}

/**
 * Refuses (UserError, exit 2) the approval of a campaign held by the four-eyes rule by anyone
 * who imported its rows (names compared as identities: actorKey), by anyone
 * who has not proved who they are (a typed `--as` or GIFTJOBS_ACTOR, the OS user, the
 * dashboard's shared token), or by a user without the approve role.
 */
export function checkFourEyes(campaign: string, meta: CampaignMeta, approver: Actor): void {
  const rule = (meta as FourEyesMeta)[FOUR_EYES_FIELDS.rule];
  if (!rule) return;
  const rest = `campaign ${campaign} is held by the four-eyes rule (GIFTJOBS_APPROVAL_THRESHOLD: ${fourEyesRuleWords(rule)})`;
  if (importersOf(meta).some((n) => sameActor(n, approver.name)))
    throw new UserError(
      `${rest}: ${approver.name} imported it, so someone else must approve it (four eyes)`,
    );
  const unproven = unprovenReason(approver);
  if (unproven) throw new UserError(`${rest}: ${unproven}`);
  if (!approver.roles?.has("approve"))
    throw new UserError(
      `${rest}: ${approver.name} may not approve: that needs the approve role (the users file gives roles)`,
    );
}

/** Why `actor` has not proved who they are, or undefined when they have. */
function unprovenReason(actor: Actor): string | undefined {
  if (actor.source === "token") return undefined;
  if (actor.source === "dashboard")
    return actorKey(actor.name) === actorKey(SHARED_DASHBOARD_NAME)
      ? "the dashboard's shared token names no person; approve it as a named user of the dashboard's users file, or with giftjobs orders approve and your token (GIFTJOBS_USER_TOKEN or --token-file)"
      : undefined;
  const typed = actor.source === "env" ? "a typed name (--as, GIFTJOBS_ACTOR)" : "the OS user";
  return `${typed} proves nobody: approve with your token of the users file (GIFTJOBS_USER_TOKEN or --token-file, and GIFTJOBS_USERS_FILE), or on the dashboard as a named user`;
}

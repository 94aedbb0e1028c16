import type { Actor } from "../audit/actor.js";
import { type Amend, firstThenAmend, planFirst } from "../audit/audited.js";
import {
  approveCampaign,
  cancelCampaign,
  pauseCampaign,
  resumeCampaign,
} from "../campaigns/control.js";
import { type RetryResult, retryCampaign, retryShortfall } from "../campaigns/retry.js";
import type { CampaignSummary } from "../campaigns/summary.js";
import type { DailyLimit } from "../daily-limit.js";
import { grouped } from "../grouped.js";
import type { Ledger } from "../ledger/ledger.js";
import type { StoredState } from "../ledger/types.js";
import { plural } from "../plural.js";
import type { Role } from "./dashboard-user.js";

/** What the campaign page knows of a campaign when it decides which buttons to show. */
interface ActionContext {
  stored: StoredState;
  summary: CampaignSummary;
}

/**
 * Who asks for an action, and what of the dashboard's settings the action's function needs as
 * the CLI's does: the signed-in user from the client's address (request-user.ts,
 * actorOfRequest), and the daily limit as the dashboard's environment sets it (daily-limit.ts).
 */
interface ActionRequest {
  actor: Actor;
  dailyLimit: DailyLimit | undefined;
  /**
   * Writes the action's entry, with the line it will show, once its checks have passed and
   * before the move that lets the campaign spend (docs/architecture/audit.md, "An entry before
   * its effect"): approve, resume and retry call it. It resolves to what writes a second entry,
   * `refused`, when the effect then falls short of the line (retry).
   */
  entryFirst?: (outcome: string) => Promise<Amend>;
}

/**
 * One button of the campaign page, only with `--allow-actions`. `run` calls exactly the
 * function the CLI command calls (src/cli/commands/campaigns.ts, orders.ts) and returns the
 * line shown; an error it throws is shown as one line. Approve hands the request's actor to
 * approveCampaign, so the four-eyes rule judges the dashboard's approvals as it judges the
 * CLI's; resume hands the daily limit to resumeCampaign, as `orders resume` does.
 */
export interface CampaignAction {
  name: string;
  /** The button's text. */
  label: string;
  /** The question asked before it runs (a confirm() in the page, or a confirmation page). */
  confirm: (campaign: string) => string;
  /** The role a user needs for it (dashboard-user.ts). */
  role: Exclude<Role, "view">;
  /** Whether the button is shown; the function itself still decides whether it may run. */
  shown: (context: ActionContext) => boolean;
  /**
   * Whether it may run when the audit trail cannot be written (PostgreSQL away): only what
   * stops spending does (as the CLI's pause and cancel: src/cli/audit-trail.ts).
   */
  unrecorded: boolean;
  run: (ledger: Ledger, campaign: string, request: ActionRequest) => Promise<string>;
}

const LIVE: readonly StoredState[] = ["held", "running", "paused"];

/**
 * The actions, in button order. A new one (an `archive` calling archiveCampaign, like
 * `orders archive`) is one more entry here: the page, the route and the guard pick it up.
 */
export const CAMPAIGN_ACTIONS: readonly CampaignAction[] = [
  {
    name: "approve",
    label: "Approve",
    confirm: (c) => `Approve campaign ${c}? Its orders are sent from now on.`,
    role: "approve",
    shown: ({ stored }) => stored === "held",
    unrecorded: false,
    run: async (ledger, c, { actor, entryFirst }) => {
      await approveCampaign(ledger, c, {
        approver: actor,
        beforeMove: async () => {
          await entryFirst?.(`campaign ${c} approved`);
        },
      });
      return `campaign ${c} approved`;
    },
  },
  {
    name: "pause",
    label: "Pause",
    confirm: (c) => `Pause campaign ${c}? Nothing more is sent until it is resumed.`,
    role: "operate",
    shown: ({ stored }) => stored === "running",
    unrecorded: true,
    run: async (ledger, c) =>
      (await pauseCampaign(ledger, c))
        ? `campaign ${c} paused`
        : `campaign ${c} was already paused`,
  },
  {
    name: "resume",
    label: "Resume",
    confirm: (c) => `Resume campaign ${c}? Its pending orders are sent again.`,
    role: "operate",
    shown: ({ stored }) => stored === "paused",
    unrecorded: false,
    run: async (ledger, c, { dailyLimit, entryFirst }) =>
      (await resumeCampaign(ledger, c, {
        limit: dailyLimit,
        beforeMove: async () => {
          await entryFirst?.(`campaign ${c} resumed`);
        },
      }))
        ? `campaign ${c} resumed`
        : `campaign ${c} was already running`,
  },
  {
    name: "retry",
    label: "Retry failed_uncertain (same key)",
    confirm: (c) =>
      `Retry the failed_uncertain rows of ${c} under their SAME keys? The service replays an order it made, so nothing is paid twice.`,
    role: "operate",
    shown: ({ stored, summary }) =>
      summary.failed_uncertain > 0 && stored !== "cancelled" && stored !== "archived",
    unrecorded: false,
    run: async (ledger, c, { entryFirst }) => {
      const result = await planFirst(
        firstThenAmend(
          async (plan: RetryResult) => entryFirst?.(retryLine(plan)),
          retryShortfall,
          (end) => ({ outcome: retryLine(end) }),
        ),
        (beforeMove) => retryCampaign(ledger, c, { beforeMove }),
      );
      return retryLine(result);
    },
  },
  {
    name: "cancel",
    label: "Cancel campaign",
    confirm: (c) =>
      `Cancel campaign ${c} FOR GOOD? Rows not yet sent become cancelled; orders already sent are followed to their end. This cannot be undone.`,
    role: "operate",
    shown: ({ stored }) => LIVE.includes(stored),
    unrecorded: true,
    run: async (ledger, c) => {
      const taken = await cancelCampaign(ledger, c);
      return `campaign ${c} cancelled (${grouped(taken)} ${plural(taken, "order")} taken off the pending list); no new order will be created`;
    },
  },
  // archive: another engineer adds it here (see above).
];

function retryLine(result: RetryResult): string {
  return `${grouped(result.rows)} ${plural(result.rows, "row")} in ${grouped(result.orders)} ${plural(result.orders, "order")} re-queued (${result.mode})`;
}

export function findAction(name: string): CampaignAction | undefined {
  return CAMPAIGN_ACTIONS.find((a) => a.name === name);
}

import {
  approveCampaign,
  cancelCampaign,
  pauseCampaign,
  resumeCampaign,
} from "../campaigns/control.js";
import { retryCampaign } from "../campaigns/retry.js";
import type { CampaignSummary } from "../campaigns/summary.js";
import type { Ledger } from "../ledger/ledger.js";
import type { StoredState } from "../ledger/types.js";
import { plural } from "../plural.js";

/** What the campaign page knows of a campaign when it decides which buttons to show. */
export interface ActionContext {
  stored: StoredState;
  summary: CampaignSummary;
}

/**
 * One button of the campaign page, only with `--allow-actions`. `run` calls exactly the
 * function the CLI command calls (src/cli/commands/campaigns.ts, orders.ts) and returns the
 * line shown; an error it throws is shown as one line.
 */
export interface CampaignAction {
  name: string;
  /** The button's text. */
  label: string;
  /** The question asked before it runs (a confirm() in the page, or a confirmation page). */
  confirm: (campaign: string) => string;
  /** Whether the button is shown; the function itself still decides whether it may run. */
  shown: (context: ActionContext) => boolean;
  run: (ledger: Ledger, campaign: string) => Promise<string>;
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
    shown: ({ stored }) => stored === "held",
    run: async (ledger, c) => {
      await approveCampaign(ledger, c);
      return `campaign ${c} approved`;
    },
  },
  {
    name: "pause",
    label: "Pause",
    confirm: (c) => `Pause campaign ${c}? Nothing more is sent until it is resumed.`,
    shown: ({ stored }) => stored === "running",
    run: async (ledger, c) =>
      (await pauseCampaign(ledger, c))
        ? `campaign ${c} paused`
        : `campaign ${c} was already paused`,
  },
  {
    name: "resume",
    label: "Resume",
    confirm: (c) => `Resume campaign ${c}? Its pending orders are sent again.`,
    shown: ({ stored }) => stored === "paused",
    run: async (ledger, c) =>
      (await resumeCampaign(ledger, c))
        ? `campaign ${c} resumed`
        : `campaign ${c} was already running`,
  },
  {
    name: "retry",
    label: "Retry failed_uncertain (same key)",
    confirm: (c) =>
      `Retry the failed_uncertain rows of ${c} under their SAME keys? The service replays an order it made, so nothing is paid twice.`,
    shown: ({ stored, summary }) =>
      summary.failed_uncertain > 0 && stored !== "cancelled" && stored !== "archived",
    run: async (ledger, c) => {
      const result = await retryCampaign(ledger, c, {});
      return `${result.rows.toLocaleString("en-US")} ${plural(result.rows, "row")} in ${result.orders.toLocaleString("en-US")} ${plural(result.orders, "order")} re-queued (${result.mode})`;
    },
  },
  {
    name: "cancel",
    label: "Cancel campaign",
    confirm: (c) =>
      `Cancel campaign ${c} FOR GOOD? Rows not yet sent become cancelled; orders already sent are followed to their end. This cannot be undone.`,
    shown: ({ stored }) => LIVE.includes(stored),
    run: async (ledger, c) => {
      const taken = await cancelCampaign(ledger, c);
      return `campaign ${c} cancelled (${taken.toLocaleString("en-US")} ${plural(taken, "order")} taken off the pending list); no new order will be created`;
    },
  },
  // archive: another engineer adds it here (see above).
];

export function findAction(name: string): CampaignAction | undefined {
  return CAMPAIGN_ACTIONS.find((a) => a.name === name);
}

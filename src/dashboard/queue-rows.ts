import { type CampaignState, campaignState } from "../campaigns/state.js";
import { grouped } from "../grouped.js";
import type { Ledger } from "../ledger/ledger.js";
import { plural } from "../plural.js";
import { escapeHtml } from "./html-escape.js";

/** A campaign's rows still to be sent, as the queue board shows them beside its jobs. */
export interface WaitingRows {
  campaign: string;
  state: CampaignState;
  /** Rows recorded and not yet sent (most are in the ledger, not yet BullMQ jobs). */
  queued: number;
  in_flight: number;
  /** Accepted by the service, waiting for its end. */
  submitted: number;
}

/** Campaigns shown on the board's line before "and N more". */
const SHOWN = 8;

/**
 * Every campaign with rows queued, in flight or submitted, the most first. BullMQ holds only
 * about one dispatch window of jobs (docs/architecture/campaigns.md, "Campaigns and the
 * dispatcher"): "8 jobs, rate limited" may stand for 600 rows, which only the ledger knows.
 * Two reads a campaign (counts, meta), no MEMORY USAGE: bull-board asks every few seconds.
 */
export async function waitingRows(ledger: Ledger): Promise<WaitingRows[]> {
  const names = await ledger.campaigns.names();
  const all = await Promise.all(
    names.map(async (campaign) => {
      const [counts, meta] = await Promise.all([
        ledger.campaigns.counts(campaign),
        ledger.campaigns.meta(campaign),
      ]);
      return {
        campaign,
        state: campaignState(meta, counts),
        queued: counts.queued,
        in_flight: counts.in_flight,
        submitted: counts.submitted,
      };
    }),
  );
  const waiting = (w: WaitingRows) => w.queued + w.in_flight + w.submitted;
  return all
    .filter((w) => waiting(w) > 0)
    .sort((a, b) => waiting(b) - waiting(a) || a.campaign.localeCompare(b.campaign));
}

/** `600 rows to send in 2 campaigns: spring 400 queued, 8 in flight (running); ...`. */
export function waitingLine(list: WaitingRows[]): string {
  return lineOf(list, (campaign) => campaign);
}

/**
 * The line, each campaign's name as `name` gives it (plain, or an escaped link); the rest is
 * digits, states and fixed words, nothing that needs escaping.
 */
function lineOf(list: WaitingRows[], name: (campaign: string) => string): string {
  if (list.length === 0) return "No rows waiting in any campaign.";
  const rows = list.reduce((n, w) => n + w.queued + w.in_flight + w.submitted, 0);
  const parts = list.slice(0, SHOWN).map((w) => {
    const counts = [
      w.queued ? `${grouped(w.queued)} queued` : "",
      w.in_flight ? `${grouped(w.in_flight)} in flight` : "",
      w.submitted ? `${grouped(w.submitted)} submitted` : "",
    ].filter(Boolean);
    return `${name(w.campaign)} ${counts.join(", ")} (${w.state})`;
  });
  const more = list.length > SHOWN ? `; and ${list.length - SHOWN} more campaigns` : "";
  const campaigns = list.length === 1 ? "1 campaign" : `${list.length} campaigns`;
  return `${grouped(rows)} ${plural(rows, "row")} to send in ${campaigns}: ${parts.join("; ")}${more}`;
}

/**
 * The banner of bull-board's page: a link back to the campaigns and the rows waiting per
 * campaign, each name a link to its page. Made here and escaped (names are checked against
 * CAMPAIGN_NAME, but escaped anyway); bull-board's app renders beside it.
 */
export function waitingBanner(list: WaitingRows[], campaignsPath: string): string {
  // Fixed at the bottom, over bull-board's app: its layout fills the window, so a banner in the
  // page's flow would sit hidden under it.
  const style =
    "position:fixed;left:0;right:0;bottom:0;z-index:2147483647;font:14px/1.4 system-ui,sans-serif;padding:.45rem 1rem;background:#fffbe6;color:#222;border-top:1px solid #d8cf8f;box-shadow:0 -1px 4px rgba(0,0,0,.08)";
  const line = lineOf(
    list,
    (c) => `<a href="/campaigns/${encodeURIComponent(c)}">${escapeHtml(c)}</a>`,
  );
  // Drawn with the page: the orders queue's description (polled) is the live line.
  const at = new Date().toISOString().slice(11, 19);
  return `<div id="giftjobs-rows" role="status" style="${style}"><a href="${escapeHtml(campaignsPath)}"><strong>&larr; Campaigns</strong></a> · <span class="waiting">${line}</span> <small>(at ${at} UTC)</small></div>`;
}

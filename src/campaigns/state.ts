import type { Ledger } from "../ledger/ledger.js";
import type { CampaignCounts, CampaignMeta, StoredState } from "../ledger/types.js";

/**
 * The state an operator sees (docs/architecture/campaigns.md, "Campaign states"): the stored state,
 * except that a held, running or paused campaign with nothing queued, in flight or submitted
 * is `done`. A cancelled campaign stays cancelled; an archived one archived.
 */
export type CampaignState = StoredState | "done";

export function storedState(meta: CampaignMeta): StoredState {
  return meta.state ?? "running";
}

export function campaignState(meta: CampaignMeta, counts: CampaignCounts): CampaignState {
  const stored = storedState(meta);
  if (stored === "cancelled" || stored === "archived") return stored;
  const pending = counts.queued + counts.in_flight + counts.submitted;
  if (pending === 0 && counts.total > 0) return "done";
  return stored;
}

/** One move of the campaign state machine: from which stored states, to which. */
interface CampaignMove {
  from: readonly StoredState[];
  to: StoredState;
  /** The meta field that records when it was made. */
  stamp?: string;
}

/**
 * The campaign state machine (docs/architecture/campaigns.md, "Campaign states"): every move the
 * code makes, one row each. The ledger makes each atomically (its set-state script), keeping the
 * dispatcher's running set in step. Two moves are the ledger scripts' own, because they go with
 * other writes: START pauses a running campaign whose budget an order would pass (budget_paused),
 * PAUSE_FOR_LIMIT the running campaigns of a currency at its daily limit (src/ledger/daily-limit.ts),
 * and the archive (a done or cancelled campaign: src/campaigns/archive.ts) and its restore.
 */
const CAMPAIGN_MOVES = {
  /** An import of a campaign that needs approval (`orders import --hold`, or a new file). */
  hold: { from: ["running", "paused"], to: "held" },
  /** `orders approve`: a held campaign runs from now on. */
  approve: { from: ["held"], to: "running", stamp: "approved_at" },
  /** An operator, or a worker after a systemic refusal or a product gone out of order. */
  pause: { from: ["running"], to: "paused", stamp: "paused_at" },
  /** `orders resume`. */
  resume: { from: ["paused"], to: "running" },
  /** `orders cancel`: for good. */
  cancel: { from: ["held", "running", "paused"], to: "cancelled", stamp: "cancelled_at" },
} as const satisfies Record<string, CampaignMove>;

export type CampaignMoveName = keyof typeof CAMPAIGN_MOVES;

/**
 * Makes `move` if the campaign's stored state allows it, with `fields` set in its meta (and the
 * move's stamp), in one step. `changed` false: the state was `previous`, and nothing was set.
 */
export async function moveCampaign(
  ledger: Ledger,
  campaign: string,
  move: CampaignMoveName,
  fields: Record<string, string> = {},
): Promise<{ changed: boolean; previous: StoredState }> {
  const { from, to, ...rest } = CAMPAIGN_MOVES[move] as CampaignMove;
  const stamped = rest.stamp ? { [rest.stamp]: new Date().toISOString(), ...fields } : fields;
  return ledger.campaigns.setState({ campaign, state: to, from, fields: stamped });
}

/** The states `move` is made from, in words: "held, running or paused". */
export function movableFrom(move: CampaignMoveName): string {
  const from: readonly string[] = CAMPAIGN_MOVES[move].from;
  if (from.length === 1) return from[0]!;
  return `${from.slice(0, -1).join(", ")} or ${from.at(-1)}`;
}

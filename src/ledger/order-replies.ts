// The decoders of the order scripts' replies: each turns a script's answer, a word of REPLIES
// and its values, into a union (docs/architecture/ledger.md, "The scripts").
import type { ExecutionMode } from "../api/order-request.js";
import type { DailyLimit } from "../daily-limit.js";
import { replyWord } from "../redis/replies.js";
import { decodeOrder, decodeRow } from "./codec.js";
import { limitReachedOf, limitReason } from "./daily-limit.js";
import type { RowStatus } from "./row-status.js";
import type { StartResult } from "./types.js";

/** What TRANSITION answers (lua/transition.lua), read. */
export type TransitionReply =
  | { kind: "moved"; previous: string; status: RowStatus; replayed: boolean }
  | { kind: "not_allowed" | "no_order_id" | "changed"; current: string }
  | { kind: "other_order_id"; current: string; orderId: string }
  | { kind: "unknown" };

export function decodeTransition(reply: unknown): TransitionReply {
  const kind = replyWord(reply, "TRANSITION");
  const [, current, third, replayed] = reply as [string, string, string?, number?];
  switch (kind) {
    case "moved":
      return { kind, previous: current, status: third as RowStatus, replayed: replayed === 1 };
    case "other_order_id":
      return { kind, current, orderId: third ?? "" };
    case "not_allowed":
    case "no_order_id":
    case "changed":
      return { kind, current };
    case "unknown":
      return { kind };
    default:
      throw new Error(`TRANSITION answered ${kind}, which it never does`);
  }
}

/** What START answers (lua/start.lua), read. */
export function decodeStart(
  reply: unknown,
  context: { campaign: string; limit: DailyLimit | undefined },
): StartResult {
  const kind = replyWord(reply, "START");
  const [, a, b, c, mode] = reply as [string, string, (string | null)[]?, string?, string?];
  switch (kind) {
    case "started":
      return {
        kind: "started",
        order: decodeOrder(a, {
          campaign: context.campaign,
          mode: (mode || undefined) as ExecutionMode | undefined,
        }),
        rows: (b ?? []).map((r) => (r ? decodeRow(r) : undefined)),
        campaignCreatedAt: c || undefined,
      };
    case "paused":
      return { kind: "paused", reason: a };
    case "over_budget":
      return { kind: "paused", reason: a, budget: true };
    case "other_api_key":
      return { kind: "other-api-key", mark: a };
    case "daily_limit":
      return dailyLimitStop((reply as unknown[]).slice(1), context.limit);
    case "not_allowed":
      return { kind: "past", status: a };
    case "unknown":
      return { kind: "past", status: null };
    default:
      throw new Error(`START answered ${kind}, which it never does`);
  }
}

function dailyLimitStop(values: unknown[], limit: DailyLimit | undefined): StartResult {
  if (!limit) throw new Error("START answered daily_limit to a start given no daily limit");
  const reached = limitReachedOf(values);
  return { kind: "daily-limit", reason: limitReason(reached, limit.tz), reached };
}

/** What REKEY answers (lua/rekey.lua), read. */
export function decodeRekey(
  reply: unknown,
): { done: true; number: number } | { done: false; why: "not-allowed" | "unknown" | "unclear" } {
  const kind = replyWord(reply, "REKEY");
  if (kind === "rekeyed") return { done: true, number: Number((reply as unknown[])[1]) };
  if (kind === "unclear") return { done: false, why: "unclear" };
  if (kind === "not_allowed") return { done: false, why: "not-allowed" };
  if (kind === "unknown") return { done: false, why: "unknown" };
  throw new Error(`REKEY answered ${kind}, which it never does`);
}

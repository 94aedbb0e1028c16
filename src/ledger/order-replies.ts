// The decoders of the order scripts' replies: each turns a script's answer, a word of REPLIES
// and its values, into a union (docs/architecture/ledger.md, "The scripts").
import type { ExecutionMode } from "../api/order-request.js";
import type { DailyLimit } from "../daily-limit.js";
import { replyWord } from "../redis/replies.js";
import { decodeOrder, decodeRow } from "./codec.js";
import { limitReachedOf, limitReason } from "./daily-limit.js";
import type { RowStatus } from "./row-status.js";
import type { StartResult, StoredState } from "./types.js";

/** What RECORD answers (lua/record.lua), read. */
export type RecordReply =
  | { kind: "recorded"; added: number; leftOut: number; orders: number }
  | { kind: "not_allowed"; state: StoredState }
  | { kind: "fenced" }
  | { kind: "budget_exceeded"; currency: string; planned: bigint; adding: bigint; budget: bigint };

export function decodeRecord(reply: unknown): RecordReply {
  const kind = replyWord(reply, "RECORD");
  const values = (reply as unknown[]).slice(1);
  switch (kind) {
    case "recorded": {
      const [added, leftOut, orders] = values.map(Number) as [number, number, number];
      return { kind, added, leftOut, orders };
    }
    case "not_allowed":
      return { kind, state: values[0] as StoredState };
    case "fenced":
      return { kind };
    case "budget_exceeded": {
      const [currency, planned, adding, budget] = values as [string, string, string, string];
      return {
        kind,
        currency,
        planned: BigInt(planned),
        adding: BigInt(adding),
        budget: BigInt(budget),
      };
    }
    default:
      throw new Error(`RECORD answered ${kind}, which it never does`);
  }
}

/** What RELEASE_ROW answers (lua/release-row.lua), read. */
export function decodeReleaseRow(
  reply: unknown,
): { released: true; generation: number } | { released: false; status: string } {
  const kind = replyWord(reply, "RELEASE_ROW");
  const value = (reply as [string, string?])[1] ?? "";
  if (kind === "released") return { released: true, generation: Number(value) };
  if (kind === "not_allowed" || kind === "unknown") return { released: false, status: value };
  throw new Error(`RELEASE_ROW answered ${kind}, which it never does`);
}

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

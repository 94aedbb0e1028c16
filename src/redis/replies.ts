/**
 * The words a Lua script's reply opens with, each with one meaning whichever script answers it
 * (docs/architecture/ledger.md, "The scripts"): a script answers `{word, ...}` and one decoder
 * per script turns that into a TypeScript union.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export const REPLIES = {
  recorded: "the batch's new orders were recorded: {rows added, rows left out, orders added}",
  budget_exceeded:
    "the new orders would take a currency's planned price over its budget, nothing written: {currency, planned, batch, budget}",
  fenced:
    "the import's batch before this one was not recorded (refused, or its keys lost), nothing written",
  moved: "the order moved: {previous, status reached}",
  started: "the order is in flight: {order, rows, campaign created at, execution mode}",
  rekeyed: "the rows moved to a new order of the next generation: {its number}",
  released: "the failed_final row was taken out of its order: {its generation}",
  state_set: "the campaign's state was set: {the previous state}",
  unknown: "no such order, row or campaign (or, for an order id, the order was superseded)",
  not_allowed:
    "the current status (of the order, the row's order or the campaign) does not allow the change: {it}",
  changed: "the order changed since the caller read it: {current status}",
  other_order_id: "the order holds another order id: {current status, its order id}",
  no_order_id: "the order holds no order id yet: {current status}",
  unclear: "the order carries the mark of an unclear attempt: {the mark}",
  paused: "the campaign is held or paused, the order given back: {reason}",
  over_budget: "this call paused the campaign over its budget, the order given back: {reason}",
  other_api_key: "an earlier attempt ended unclear under another API key: {the mark}",
  daily_limit: "the daily limit stops the order, given back: {currency, spent, limit, price, day}",
  archived: "the campaign's data was removed, its tombstone left",
  already_archived: "the campaign was archived already: only data keys left behind were removed",
  campaign_changed:
    "the campaign changed since the caller read it, nothing written: {what changed}",
  cleared: "the archived campaign's data keys were emptied",
  restored: "the archived campaign is back: {its state}",
  claimed: "the message id was claimed: {the order index's entry, when there is one}",
  claimed_before: "the message id was claimed before: nothing to do",
  forget_marked: "the campaign's forget is begun (now or before)",
  forgotten: "the batch was rewritten without people's data: {rows written, orders written}",
  not_ended: "the campaign has rows pending or failed_uncertain: nothing written",
  not_marked: "the campaign's forget was not begun: nothing written",
  product_recorded: "the product's state was recorded",
  counted: "the importer's day was counted: {their total that day in the currency, minor units}",
  stale: "a state of the product as new or newer is recorded: nothing changed",
} as const;

export type ReplyWord = keyof typeof REPLIES;

/** The reply's word, checked: a word outside REPLIES is a script out of step with its decoder. */
export function replyWord(reply: unknown, script: string): ReplyWord {
  const word = Array.isArray(reply) ? reply[0] : undefined;
  if (typeof word === "string" && word in REPLIES) return word as ReplyWord;
  throw new Error(`${script} answered ${JSON.stringify(reply)}, which no decoder reads`);
}

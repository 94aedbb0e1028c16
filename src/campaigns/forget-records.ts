import { TAG_CAMPAIGN, TAG_KEY } from "../ledger/order-tags.js";
import type { CampaignCounts, CampaignMeta, LedgerOrder, LedgerRow } from "../ledger/types.js";

/**
 * What a forgotten campaign shows where a person's e-mail, reference or recipient reference was
 * (docs/architecture/forgetting.md). Not an e-mail address, so nothing can ever be sent to it.
 */
export const FORGOTTEN = "forgotten";

/** Anything shaped like an e-mail address, in free text such as a service's error message. */
const EMAIL_LIKE = /[^\s@"'<>(),;:[\]]+@[^\s@"'<>(),;:[\]]+/g;

/** `text` with every e-mail address in it replaced by FORGOTTEN. */
export function forgetInText(text: string): string {
  return text.replace(EMAIL_LIKE, FORGOTTEN);
}

/**
 * A row without the person: its e-mail, reference and recipient reference become FORGOTTEN
 * (empty ones stay empty: a link row had no e-mail). Its identity, payload hash, line, order,
 * product, face value and currency stay: they are the accounting and the repeats check.
 */
export function forgetRow(row: LedgerRow): LedgerRow {
  const kept: LedgerRow = { ...row, email: row.email === "" ? "" : FORGOTTEN };
  if (row.reference !== undefined) kept.reference = FORGOTTEN;
  if (row.recipient_reference !== undefined) kept.recipient_reference = FORGOTTEN;
  return kept;
}

/**
 * An order without what may name a person: its description and metadata (a name, a message)
 * go, but for the tags naming its campaign and key; e-mails in its error message become
 * FORGOTTEN. Key, status, money, order and item ids, payouts and times stay.
 */
export function forgetOrder(order: LedgerOrder): LedgerOrder {
  const { description: _description, metadata, ...kept } = order;
  const tags = tagsOf(metadata);
  const forgotten: LedgerOrder = tags ? { ...kept, metadata: tags } : kept;
  if (typeof order.error_message === "string")
    forgotten.error_message = forgetInText(order.error_message);
  return forgotten;
}

function tagsOf(metadata: Record<string, string> | undefined): Record<string, string> | undefined {
  if (metadata?.[TAG_CAMPAIGN] === undefined || metadata[TAG_KEY] === undefined) return undefined;
  return { [TAG_CAMPAIGN]: metadata[TAG_CAMPAIGN], [TAG_KEY]: metadata[TAG_KEY] };
}

/** The meta fields of a forget: when it began, and when it was finished. */
export const FORGET_FIELDS = { started: "forget_started_at", done: "forgotten_at" } as const;

/** When the campaign was forgotten, if it was (a forget begun and not finished: not yet). */
export function forgottenAt(meta: CampaignMeta): string | undefined {
  return (meta as Record<string, string | undefined>)[FORGET_FIELDS.done];
}

/** Whether a forget of the campaign has begun (finished or not): its people may be gone. */
export function forgetBegun(meta: CampaignMeta): boolean {
  return (meta as Record<string, string | undefined>)[FORGET_FIELDS.started] !== undefined;
}

/** Why nothing more is sent for a forgotten campaign: its rows no longer say to whom. */
export function forgottenRefusal(campaign: string, what: "retried" | "imported into"): string {
  return `campaign ${campaign} was forgotten (orders forget): its rows no longer hold their e-mails, so it cannot be ${what}; import the rows to pay under a new campaign name`;
}

/** When the campaign ended: its last order's end, else its cancel, else its archive. */
export function endedAt(meta: CampaignMeta): string | undefined {
  return meta.finished_at ?? meta.cancelled_at ?? meta.archived_at;
}

/**
 * Why the campaign is not ended, in words, or undefined when it is: nothing queued, in flight or
 * submitted (scheduled rows are queued), and no failed_uncertain row, whose order may exist
 * until reconcile or retry settles it.
 */
export function notEndedBecause(counts: CampaignCounts): string | undefined {
  const pending = counts.queued + counts.in_flight + counts.submitted;
  if (pending > 0) return `${pending} rows are still queued, in flight or submitted`;
  if (counts.failed_uncertain > 0)
    return `${counts.failed_uncertain} rows are failed_uncertain (an order may exist for them: settle them with orders reconcile or orders retry first)`;
  if (counts.total === 0) return "it has no rows";
  return undefined;
}

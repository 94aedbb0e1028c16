import type { ApiClient } from "../api/client.js";
import type { Order } from "../api/schemas.js";
import type { Ledger } from "../ledger/ledger.js";
import type { RowStatus } from "../ledger/row-status.js";
import type { OrderPatch } from "../ledger/types.js";
import { completedPatch } from "../orders/outcome.js";
import type { Lookups } from "./lookups.js";
import type { LedgerSide, UncertainOrder } from "./reconcile-ledger.js";
import { lookUpOrder } from "./service-orders.js";

/** What the service showed of the campaign's failed_uncertain orders (see planSettlements). */
export interface Evidence {
  /** Service orders made under an uncertain order's key (its tags and its body), by its number. */
  made: Map<number, Order[]>;
  /** Service orders that could be an uncertain order's (an untagged body alike), by its number. */
  alike: Map<number, Order[]>;
  /** Uncertain orders that hold an order id, with what the service says of it. */
  byId: Map<number, { id: string; order: Order | undefined; status: string | undefined }>;
  unidentified: string[];
}

/** What became of a failed_uncertain order. */
export interface UncertainEntry {
  ledger_order: number;
  /**
   * `completed` / `failed_final`: the service made an order under its key (COMPLETED / FAILED);
   * `absent`: it has none in the whole window (recorded on the order); `undecided`: see `why`.
   */
  outcome: "completed" | "failed_final" | "absent" | "undecided";
  order_id?: string;
  why?: string;
  lines?: number[];
}

export interface SettleDeps {
  ledger: Ledger;
  client: ApiClient;
  lookups: Lookups;
  side: LedgerSide;
  /** When the campaign was created (ISO), to tell a replayed order. */
  createdAt: string | undefined;
  /** Fingerprint of the API key the service was read with. */
  apiKey: string;
}

interface When {
  /** When the listing began (ISO). */
  listedAt: string;
  minAgeMs: number;
}

/**
 * What settling one failed_uncertain order writes to the ledger (applySettlements): a move to
 * the end the service gave its order, or the mark of an order absent from the service.
 */
type SettlementWrite =
  | { kind: "end"; to: "completed" | "failed_final"; patch: OrderPatch }
  | { kind: "absent"; updatedAt: string; listedAt: string };

/** How one failed_uncertain order is to settle: its entry, and what applying it writes. */
export interface Settlement {
  entry: UncertainEntry;
  /** None when nothing is written: undecided, or absent recorded before. */
  write?: SettlementWrite;
}

/**
 * Decides how the campaign's failed_uncertain orders settle from what the service showed
 * (docs/architecture/keys-and-exactly-once.md, "Reconciling with the service"), writing
 * nothing: one order made under an order's key ends it as the service ended that order, with
 * the clearance `answered` (the mark goes, the uncertain money moves to spent, or back for
 * FAILED); none in the whole window, nothing the service would not show yet, and a last attempt
 * old enough: recorded absent. Anything else is left as it is, and says why. The plan is
 * recorded in the audit trail before applySettlements makes it (docs/architecture/audit.md,
 * "An entry before its effect").
 */
export async function planSettlements(
  deps: SettleDeps,
  evidence: Evidence,
  when: When,
): Promise<Settlement[]> {
  const plan: Settlement[] = [];
  for (const [number, seen] of evidence.byId) plan.push(await settleById(deps, number, seen));
  for (const uncertain of deps.side.uncertain.values())
    plan.push(await settleByKey(deps, uncertain, evidence, when));
  for (const { entry } of plan) entry.lines = await deps.side.lines(entry.ledger_order);
  return plan.sort((a, b) => a.entry.ledger_order - b.entry.ledger_order);
}

/** The statuses the plan moves orders to, by order number (absent moves none). */
export function plannedStatuses(plan: Settlement[]): Map<number, RowStatus> {
  const statuses = new Map<number, RowStatus>();
  for (const { entry, write } of plan)
    if (write?.kind === "end") statuses.set(entry.ledger_order, write.to);
  return statuses;
}

/**
 * Makes the plan: each write in one script that moves the order only if it is still
 * failed_uncertain (and, for absent, its last attempt unchanged). An order changed since the
 * plan is left as it is: its entry is then undecided, "it changed during the check".
 */
export async function applySettlements(
  { ledger, side, apiKey }: Pick<SettleDeps, "ledger" | "side" | "apiKey">,
  plan: Settlement[],
): Promise<UncertainEntry[]> {
  const entries: UncertainEntry[] = [];
  for (const { entry, write } of plan) {
    if (!write) {
      entries.push(entry);
      continue;
    }
    const number = entry.ledger_order;
    const done =
      write.kind === "end"
        ? (
            await ledger.orders.transition({
              campaign: side.campaign,
              number,
              from: ["failed_uncertain"],
              to: write.to,
              patch: write.patch,
              clearance: "answered",
            })
          ).moved
        : await ledger.orders.noteAbsent({
            campaign: side.campaign,
            number,
            updatedAt: write.updatedAt,
            listedAt: write.listedAt,
            apiKey,
          });
    entries.push(
      done
        ? entry
        : {
            ...undecided(number, "it changed during the check", entry.order_id),
            ...(entry.lines ? { lines: entry.lines } : {}),
          },
    );
  }
  return entries;
}

function undecided(number: number, why: string, orderId?: string): UncertainEntry {
  return {
    ledger_order: number,
    outcome: "undecided",
    why,
    ...(orderId ? { order_id: orderId } : {}),
  };
}

function left(number: number, why: string, orderId?: string): Settlement {
  return { entry: undecided(number, why, orderId) };
}

/** A failed_uncertain order that holds an order id: as the service ended that order. */
async function settleById(
  deps: SettleDeps,
  number: number,
  seen: { id: string; order: Order | undefined; status: string | undefined },
): Promise<Settlement> {
  if (seen.status === "PROCESSING")
    return left(number, "the service is still processing its order", seen.id);
  if (seen.status !== "COMPLETED" && seen.status !== "FAILED")
    return left(number, `the service reports its order ${seen.status}`, seen.id);
  let order = seen.order;
  if (!order) {
    const lookup = await lookUpOrder(deps.client, deps.lookups, seen.id);
    if (lookup?.kind !== "order") return left(number, "its order could not be read", seen.id);
    order = lookup.order;
  }
  return end(deps, number, order);
}

/** A failed_uncertain order without an order id: found under its key, absent, or neither. */
async function settleByKey(
  deps: SettleDeps,
  uncertain: UncertainOrder,
  evidence: Evidence,
  when: When,
): Promise<Settlement> {
  const { number } = uncertain;
  const made = evidence.made.get(number) ?? [];
  const alike = evidence.alike.get(number) ?? [];
  if (made.length === 1 && alike.length === 0) return end(deps, number, made[0] as Order);
  const ids = [...made, ...alike].map((order) => order.id).join(", ");
  if (made.length > 1)
    return left(number, `${made.length} orders on the service carry its key: ${ids}`);
  if (alike.length > 0)
    return left(
      number,
      `orders on the service could be its (same body; no key tag to tell): ${ids}`,
    );
  return absent(deps, uncertain, evidence.unidentified, when);
}

/** The order is to end as the service ended the order made under its key. */
async function end(deps: SettleDeps, number: number, order: Order): Promise<Settlement> {
  const record = await deps.ledger.orders.getOrder(deps.side.campaign, number);
  if (!record) return left(number, "it is gone from the ledger", order.id);
  let write: SettlementWrite;
  if (order.status === "COMPLETED") {
    const rows = record.identities.length;
    const patch = completedPatch(order, rows, false, deps.createdAt);
    write = { kind: "end", to: "completed", patch };
  } else if (order.status === "FAILED") {
    // The service made the order and failed it: nothing was paid, and the key's record says so.
    write = {
      kind: "end",
      to: "failed_final",
      patch: {
        order_id: order.id,
        error_type: "order_failed",
        error_message: `orders reconcile: the service reports order ${order.id} FAILED`,
      },
    };
  } else return left(number, `the service reports its order ${order.status}`, order.id);
  return { entry: { ledger_order: number, outcome: write.to, order_id: order.id }, write };
}

/** No order of the window is, or could be, this one's: recorded, unless it is too soon to tell. */
async function absent(
  deps: SettleDeps,
  { number, order }: UncertainOrder,
  unidentified: string[],
  when: When,
): Promise<Settlement> {
  if (unidentified.length > 0)
    return left(
      number,
      `${unidentified.length} orders of the window are still PROCESSING and show no ` +
        "metadata yet: run reconcile again later",
    );
  const updated = order.updated_at ? Date.parse(order.updated_at) : Number.NaN;
  if (!Number.isFinite(updated)) return left(number, "its last attempt has no time");
  if (updated > Date.parse(when.listedAt) - when.minAgeMs) {
    const minutes = Math.round(when.minAgeMs / 60_000);
    return left(
      number,
      `its last attempt ended less than ${minutes} minutes before the check (the service ` +
        "may still make the order): run reconcile again later",
    );
  }
  const otherKey =
    order.unclear_api_key && order.unclear_api_key !== deps.apiKey
      ? "; its unclear attempt was made with another API key: retry --new-key needs --force"
      : "";
  if (order.reconciled_absent_at)
    return {
      entry: { ledger_order: number, outcome: "absent", why: `recorded before${otherKey}` },
    };
  return {
    entry: {
      ledger_order: number,
      outcome: "absent",
      why: `no order on the service under its key${otherKey}`,
    },
    write: { kind: "absent", updatedAt: order.updated_at as string, listedAt: when.listedAt },
  };
}

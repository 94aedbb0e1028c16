import type { ApiClient } from "../../src/api/client.js";
import {
  type ApiError,
  ApiVersionError,
  InsufficientFundsError,
  OrderingRestrictedError,
  UnauthorizedError,
} from "../../src/api/errors/index.js";
import type { Ledger } from "../../src/ledger/ledger.js";
import { currencyDecimals, fromUnits, toUnits } from "../../src/money.js";

/**
 * The reason a systemic refusal pauses a campaign with, in words that say what to do
 * (docs/troubleshooting.md, "Paused campaigns"): `TYPE: the service's message. What to fix;
 * then: giftjobs orders resume --campaign NAME`. It stays led by the error type, which the
 * dashboard, the metrics and scripts read.
 */
export async function pauseReason(
  error: ApiError,
  order: { campaign: string; currency: string },
  deps: { client: ApiClient; ledger: Ledger },
): Promise<string> {
  const resume = `then: giftjobs orders resume --campaign ${order.campaign}`;
  const head = `${error.type}: ${sentence(error.message)}`;
  // Only the refusal that pauses a running campaign needs the words (the balance read and the
  // orders' scan): the others in flight find it paused already.
  if ((await deps.ledger.campaigns.meta(order.campaign)).state !== "running") return head;
  return `${head} ${await sharedFix(error, order, deps)}; ${resume}`;
}

/** How long the refusals of one moment share one fix (a read of the balance, a scan). */
const SHARED_MS = 2000;
const recent = new WeakMap<Ledger, Map<string, { at: number; fix: Promise<string> }>>();

/**
 * The refusals of the orders in flight when the balance ran out come together: they share one
 * fix instead of each reading the balance and scanning the campaign's orders.
 */
function sharedFix(
  error: ApiError,
  order: { campaign: string; currency: string },
  deps: { client: ApiClient; ledger: Ledger },
): Promise<string> {
  const byKey = recent.get(deps.ledger) ?? new Map<string, { at: number; fix: Promise<string> }>();
  recent.set(deps.ledger, byKey);
  const key = `${order.campaign}\n${order.currency}\n${error.type}`;
  const now = Date.now();
  const known = byKey.get(key);
  if (known && now - known.at < SHARED_MS) return known.fix;
  for (const [k, v] of byKey) if (now - v.at >= SHARED_MS) byKey.delete(k);
  const fix = fixFor(error, order, deps);
  byKey.set(key, { at: now, fix });
  return fix;
}

/** The service's message as a sentence: ends with a full stop. */
function sentence(message: string): string {
  const text = message.trim();
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

async function fixFor(
  error: ApiError,
  order: { campaign: string; currency: string },
  deps: { client: ApiClient; ledger: Ledger },
): Promise<string> {
  if (error instanceof InsufficientFundsError) return topUp(order, deps);
  if (error instanceof OrderingRestrictedError)
    return "Raise the spending limit of the account whose key is GIFTJOBS_API_KEY";
  if (error instanceof ApiVersionError) return versionFix(error);
  if (error instanceof UnauthorizedError)
    return "The service refused the API key: set GIFTJOBS_API_KEY to a valid key allowed to order and restart the workers";
  return "Check GIFTJOBS_API_KEY and the account, and restart the workers";
}

function versionFix(error: ApiError): string {
  if (error.type === "insecure_protocol")
    return "Set GIFTJOBS_API_URL to the service's https:// address and restart the workers";
  return "Upgrade giftjobs, or set GIFTJOBS_API_VERSION to a version the service supports (unset: the account's own), and restart the workers";
}

/**
 * Which balance to top up, and by how much when known: what the campaign's orders still to
 * send cost (their import-time prices) less the balance the service reports now.
 */
async function topUp(
  order: { campaign: string; currency: string },
  deps: { client: ApiClient; ledger: Ledger },
): Promise<string> {
  const { currency } = order;
  const scale = currencyDecimals(currency);
  const [balance, toSend] = await Promise.all([
    deps.client
      .getBalance(currency)
      .then((b) => toUnits(b.balance, scale))
      .catch(() => undefined),
    costToSend(deps.ledger, order.campaign, currency).catch(() => undefined),
  ]);
  const money = (units: bigint) => `${fromUnits(units, scale)} ${currency}`;
  const what = `Top up the ${currency} balance of the account whose key is GIFTJOBS_API_KEY`;
  if (!toSend) return balance === undefined ? what : `${what} (its balance is ${money(balance)})`;
  const cost = `the ${toSend.orders} ${toSend.orders === 1 ? "order" : "orders"} still to send cost ${money(toSend.units)}`;
  if (balance === undefined) return `${what}: ${cost}`;
  const short = toSend.units - balance;
  if (short <= 0n) return `${what}: its balance is ${money(balance)} and ${cost}`;
  return `${what} by at least ${money(short)}: its balance is ${money(balance)} and ${cost}`;
}

/**
 * The orders of the campaign not yet made (queued or in flight) in `currency`, and what they
 * cost; undefined when one has no recorded price. One read of the campaign's orders (HSCAN),
 * once per pause.
 */
async function costToSend(
  ledger: Ledger,
  campaign: string,
  currency: string,
): Promise<{ orders: number; units: bigint } | undefined> {
  let orders = 0;
  let units = 0n;
  for await (const [, order] of ledger.orders.all(campaign)) {
    if (order.status !== "queued" && order.status !== "in_flight") continue;
    if (order.currency !== currency) continue;
    if (order.price === undefined) return undefined;
    orders += 1;
    units += BigInt(order.price);
  }
  return orders === 0 ? undefined : { orders, units };
}

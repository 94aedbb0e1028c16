import type { ApiClient } from "../api/client.js";
import { ApiError, MalformedResponseError, UnauthorizedError } from "../api/errors/index.js";
import {
  type EstimableChoice,
  MAX_ESTIMATE_ITEMS,
  type OrderEstimateItem,
} from "../api/order-estimate.js";
import type { EstimatedItem, OrderEstimate } from "../api/schemas.js";
import { withRetries } from "../catalog/retry-policy.js";
import { grouped } from "../grouped.js";
import type { Logger } from "../log.js";
import { currencyDecimals, toUnits } from "../money.js";
import { type Card, type CardBook, cardKey } from "./card-prices.js";
import type { Survey } from "./import-survey.js";
import type { ImportDeps } from "./import-types.js";
import { keyRefused } from "./key-refused.js";
import type { Pricing } from "./pricing.js";

/**
 * Prices pass 1's valid rows with the service where it can: the survey's totals (shown, and
 * checked against budgets and the balance) become the service's, and so do the prices pass 2
 * records. Otherwise they stay pass 1's, and the pricing says why.
 */
export async function priceSurvey(survey: Survey, deps: ImportDeps): Promise<Pricing> {
  const localBasis = deps.catalog ? "snapshot" : "face_value";
  const pricing = await priceWithService(survey.cards, { ...deps, localBasis });
  const totals = survey.cards.serviceTotals();
  if (totals) {
    survey.totals = totals.all;
    survey.newTotals = totals.fresh;
  }
  return pricing;
}

/** As the balance check asks: a blip is tried again, a dead address is not waited on long. */
const RETRIES = { retries: 2, minDelayMs: 500, unreachableTries: 3 };

/**
 * Asks the service to price every card of the import (one estimate per currency and 500 cards,
 * one at a time, each tried as the balance check is), and on success gives the book the
 * service's prices. A service that does not answer, refuses the rows, or answers what cannot be
 * read leaves the local prices in place, and the returned note says why: pricing never stops an
 * import (docs/architecture/import.md, "Prices"). A refused API key does (RunError, exit 1, a dry
 * run too): no order could be sent with it. When the service is not asked (template rows, too
 * many cards) the key is checked all the same, with one GET /v2/balance.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export async function priceWithService(
  cards: CardBook,
  deps: { client?: ApiClient; log: Logger; localBasis: "snapshot" | "face_value" },
): Promise<Pricing> {
  const local = (note: string): Pricing => ({ by: deps.localBasis, note });
  if (cards.size === 0) return local("no rows to price");
  if (!deps.client) return local("the service was not asked: no API client");
  const client = deps.client;
  if (cards.overflow) {
    await checkKey(client, deps.log);
    return local(
      `the service was not asked: more than ${grouped(cards.size)} distinct ` +
        "cards (product and face value) to price",
    );
  }
  const batches = estimateBatches(cards);
  if (!batches) {
    await checkKey(client, deps.log);
    return local("the service was not asked: it does not price template rows");
  }
  const prices = new Map<string, bigint>();
  try {
    for (const { currency, cards: batch } of batches) {
      const estimate = await withRetries(
        () =>
          client.estimateOrder({
            payment_method: { type: "ACCOUNT_BALANCE", currency },
            items: batch.map(([, card]) => itemOf(card)),
          }),
        RETRIES,
      );
      readPrices(estimate, { currency, batch, prices });
    }
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    if (error instanceof UnauthorizedError) throw keyRefused(error);
    const note = whyNot(error);
    // Not a warning: the output says it where the prices are shown. The service's answer in a
    // few fields, not the Error: its stack says nothing a user can act on.
    deps.log.info({ error: error.toJSON() }, `prices estimated locally: ${note}`);
    return local(note);
  }
  cards.pricedByService(prices);
  return { by: "service" };
}

/**
 * Whether the service takes the API key, for an import whose prices it is not asked for: one
 * GET /v2/balance, not retried. Only a refused key stops the import (keyRefused); any other
 * failure is left to the balance check and the workers, as before, and logged at debug.
 */
async function checkKey(client: ApiClient, log: Logger): Promise<void> {
  try {
    await client.getBalance();
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    if (error instanceof UnauthorizedError) throw keyRefused(error);
    log.debug({ error: error.toJSON() }, "the API key could not be checked");
  }
}

type Batch = { currency: string; cards: [string, Card][] };

/** The cards cut into estimates: by currency, at most 500 each; undefined when one cannot be. */
function estimateBatches(cards: CardBook): Batch[] | undefined {
  const byCurrency = new Map<string, [string, Card][]>();
  for (const entry of cards.entries()) {
    if (entry[1].products === undefined) return undefined;
    const list = byCurrency.get(entry[1].currency) ?? [];
    list.push(entry);
    byCurrency.set(entry[1].currency, list);
  }
  const batches: Batch[] = [];
  for (const currency of [...byCurrency.keys()].sort()) {
    const list = byCurrency.get(currency)!;
    for (let at = 0; at < list.length; at += MAX_ESTIMATE_ITEMS)
      batches.push({ currency, cards: list.slice(at, at + MAX_ESTIMATE_ITEMS) });
  }
  return batches;
}

function itemOf(card: Card): OrderEstimateItem {
  return { face_value: card.face, products: card.products! };
}

/**
 * One row's price of each card of the batch, from the service's answer, checked: the answer is
 * in the currency asked, prices every card asked (found by product and face value, whatever the
 * order of the items) at the currency's scale, and its total is the sum of its items. Anything
 * else is a MalformedResponseError: the prices are not taken in part.
 */
function readPrices(
  estimate: OrderEstimate,
  {
    currency,
    batch,
    prices,
  }: { currency: string; batch: [string, Card][]; prices: Map<string, bigint> },
): void {
  const scale = currencyDecimals(currency);
  const units = (amount: string, what: string) => {
    try {
      return toUnits(amount, scale);
    } catch {
      throw unreadable(`${what} ${amount} is not an amount of ${currency}`);
    }
  };
  if (estimate.currency !== currency)
    throw unreadable(`asked in ${currency}, answered in ${estimate.currency}`);
  const answered = new Map<string, bigint>();
  let sum = 0n;
  for (const item of estimate.items) {
    const products = choiceOf(item);
    const price = units(item.price, "price");
    sum += price;
    if (products)
      answered.set(cardKey(currency, products, units(item.face_value, "face value")), price);
  }
  if (sum !== units(estimate.total_price, "total_price"))
    throw unreadable(`its total_price ${estimate.total_price} is not the sum of its items' prices`);
  for (const [key, card] of batch) {
    const price = answered.get(key);
    if (price === undefined)
      throw unreadable(`no price for ${JSON.stringify(card.products)} at ${card.face} ${currency}`);
    prices.set(key, price);
  }
}

/** The products an answered item names, as the request spelled them; undefined if neither. */
function choiceOf(item: EstimatedItem): EstimableChoice | undefined {
  const { type, value, values } = item.products;
  if (type === "SINGLE" && typeof value === "string") return { type, value };
  if (type === "MULTIPLE" && Array.isArray(values)) return { type, values };
  return undefined;
}

function unreadable(problem: string): MalformedResponseError {
  return new MalformedResponseError({
    status: 200,
    type: "malformed_response",
    message: `order estimate: ${problem}`,
  });
}

/** Why the service's prices are not used, in one line: the answer it gave, or the lack of one. */
function whyNot(error: ApiError): string {
  const line = error.message.replace(/\s+/g, " ").trim();
  if (error instanceof MalformedResponseError)
    return `the service's answer could not be read: ${line}`;
  if (error.status === 0) return `the service did not answer: ${line}`;
  const what = `${error.status} ${error.type}: ${line}`;
  if (error.status >= 400 && error.status < 500 && error.status !== 429)
    return `the service refused to price the rows: ${what}`;
  return `the service did not answer: ${what}`;
}

import { currencyDecimals, fromUnits } from "../money.js";
import { chance, mulberry32, pick, type Random, randomInt } from "./prng.js";
import type { ContentResources, PayoutDetailsBase, Product, SubscriptionPlan } from "./types.js";

export interface GenerateCatalogOptions {
  /** Number of products. @defaultValue 250 */
  products?: number;
  /** Seed of the generator: the same products and seed give the same catalog. @defaultValue 1 */
  seed?: number;
}

interface Market {
  country: string;
  currency: string;
  locale: string;
  /** Other countries where a product of this market may also be redeemed. */
  neighbours: string[];
}

const MARKETS: Market[] = [
  { country: "US", currency: "USD", locale: "en_US", neighbours: ["PR", "CA"] },
  { country: "CA", currency: "CAD", locale: "en_CA", neighbours: [] },
  { country: "GB", currency: "GBP", locale: "en_GB", neighbours: ["IE"] },
  { country: "DE", currency: "EUR", locale: "de_DE", neighbours: ["AT", "NL", "BE"] },
  { country: "FR", currency: "EUR", locale: "fr_FR", neighbours: ["BE", "LU"] },
  { country: "ES", currency: "EUR", locale: "es_ES", neighbours: ["PT"] },
  { country: "JP", currency: "JPY", locale: "ja_JP", neighbours: [] },
  { country: "AU", currency: "AUD", locale: "en_AU", neighbours: ["NZ"] },
];

const BRANDS: { prefix: string; name: string; categories: string[] }[] = [
  { prefix: "AMZ", name: "Amazon", categories: ["department-stores"] },
  { prefix: "APL", name: "Apple", categories: ["electricals", "entertainment"] },
  { prefix: "BKS", name: "Bookstop", categories: ["booksellers"] },
  { prefix: "CIN", name: "Cinemax", categories: ["entertainment", "experiences"] },
  { prefix: "DIY", name: "HomeFix", categories: ["home-and-diy"] },
  { prefix: "FSH", name: "Fashionista", categories: ["fashion", "womens-fashion"] },
  { prefix: "GRC", name: "FreshMart", categories: ["supermarkets", "food-and-drink"] },
  { prefix: "JWL", name: "Sparkle", categories: ["jewellers"] },
  { prefix: "MNS", name: "Gentry", categories: ["mens-fashion", "fashion"] },
  { prefix: "NFX", name: "StreamFlix", categories: ["entertainment"] },
  { prefix: "PPD", name: "PayAnywhere", categories: ["prepaid-card"] },
  { prefix: "SPT", name: "SportsHub", categories: ["leisure-and-sports"] },
  { prefix: "SPA", name: "Serenity Spa", categories: ["beauty-and-lifestyle", "experiences"] },
  { prefix: "TOY", name: "ToyTown", categories: ["toys-and-games"] },
  { prefix: "TRV", name: "JetAway", categories: ["travel"] },
  { prefix: "UBR", name: "RideNow", categories: ["travel", "food-and-drink"] },
];

type Kind = "open" | "fixed" | "subscription" | "payment";

/** The first products get fixed kinds, so that even a tiny catalog shows every kind. */
const LEADING_KINDS: Kind[] = ["open", "fixed", "subscription", "payment"];

const EXPIRY_TYPES = [
  "from-last-use",
  "from-last-balance-check",
  "from-issue-date",
  "indefinite",
  "do-not-show",
];
const BARCODES = ["code-128", "code-39", "QR", "ean-13", "pdf417", "ITF", "DATA_MATRIX", "other"];
const USAGE_TYPES = ["undefined", "url-recommended", "url-only"];
const REDEEMABLE_AT = ["all", "online", "in-store"];

/** Amount in major units -> decimal string at the currency's scale. */
function money(major: number, currency: string): string {
  const scale = currencyDecimals(currency);
  return fromUnits(BigInt(Math.round(major * 10 ** scale)), scale);
}

/** JPY amounts are about a hundred times the others. */
function majorFactor(currency: string): number {
  return currency === "JPY" ? 100 : 1;
}

function maybeUrl(random: Random, url: string, nullChance: number): string | null {
  return chance(random, nullChance) ? null : url;
}

function contentResources(random: Random, base: string, locale: string): ContentResources {
  return {
    description_markdown_url: `${base}/description.md`,
    disclaimer_markdown_url: maybeUrl(random, `${base}/disclaimer.md`, 0.3),
    refund_policy_markdown_url: maybeUrl(random, `${base}/refund-policy.md`, 0.5),
    reissuance_policy_markdown_url: maybeUrl(random, `${base}/reissuance-policy.md`, 0.5),
    terms_buyer_markdown_url: maybeUrl(random, `${base}/terms-buyer.md`, 0.2),
    terms_consumer_markdown_url: maybeUrl(random, `${base}/terms-consumer.md`, 0.2),
    redemption_instructions_markdown_url: maybeUrl(random, `${base}/redemption.md`, 0.3),
    locale,
  };
}

function color(random: Random): string {
  return `#${randomInt(random, 0, 0xffffff).toString(16).padStart(6, "0").toUpperCase()}`;
}

function payoutBase(random: Random, code: string, slug: string, locale: string): PayoutDetailsBase {
  const assets = `https://assets.sandbox.invalid/products/${code}`;
  const expiryType = pick(random, EXPIRY_TYPES);
  return {
    assets: {
      card_image_url: maybeUrl(random, `${assets}/card.png`, 0.1),
      icon_image_url: maybeUrl(random, `${assets}/icon.png`, 0.1),
      primary_color: chance(random, 0.1) ? null : color(random),
    },
    balance_check_url: maybeUrl(random, `https://${slug}.example.com/balance`, 0.5),
    content_resources: contentResources(random, `https://content.sandbox.invalid/${code}`, locale),
    expiry: {
      date_policy: chance(random, 0.6) ? null : "Valid for the stated months after the last use",
      in_months: expiryType === "indefinite" ? 0 : pick(random, [6, 12, 24, 36]),
      type: expiryType,
    },
    redeemable_at: pick(random, REDEEMABLE_AT),
    website_url: maybeUrl(random, `https://${slug}.example.com`, 0.2),
    barcode_format: chance(random, 0.4) ? null : pick(random, BARCODES),
    e_code_usage_type: pick(random, USAGE_TYPES),
  };
}

function fixedList(random: Random, currency: string): string[] {
  const steps = [5, 10, 15, 20, 25, 50, 75, 100, 150, 200, 250, 500];
  const start = randomInt(random, 0, 5);
  const count = randomInt(random, 2, 6);
  return steps
    .slice(start, start + count)
    .map((value) => money(value * majorFactor(currency), currency));
}

function subscriptionPlans(random: Random, code: string, currency: string): SubscriptionPlan[] {
  const plans: SubscriptionPlan[] = [];
  const monthly = randomInt(random, 5, 20) - 0.01;
  const shapes: [SubscriptionPlan["length_unit"], number, string][] = [
    ["MONTHS", 1, "1 month"],
    ["MONTHS", 3, "3 months"],
    ["MONTHS", 12, "12 months"],
    ["DAYS", 7, "7 days"],
  ];
  const count = randomInt(random, 1, 3);
  for (const [unit, length, name] of shapes.slice(0, count)) {
    const months = unit === "DAYS" ? 0.25 : length;
    const price = Math.round(monthly * months * 100) / 100;
    plans.push({
      length_unit: unit,
      length,
      name,
      price: money(price * majorFactor(currency), currency),
      subscription_plan_code: `${code}-${unit === "DAYS" ? "D" : "M"}${length}`,
    });
  }
  return plans;
}

function discountMultiplier(random: Random): string {
  // Four decimals, as in real data ("0.0130").
  return (randomInt(random, 0, 1500) / 10000).toFixed(4);
}

function codeWidth(count: number): number {
  return Math.max(5, String(Math.max(0, count - 1)).length);
}

function generateProduct(random: Random, index: number, width: number): Product {
  const brand = pick(random, BRANDS);
  const market = pick(random, MARKETS);
  // Guarantee a JPY product early so that a small catalog has a zero-decimal currency.
  const currencyMarket = index === 4 ? (MARKETS[6] as Market) : market;
  const kind: Kind =
    LEADING_KINDS[index] ??
    (() => {
      const r = random();
      return r < 0.35 ? "open" : r < 0.7 ? "fixed" : r < 0.85 ? "subscription" : "payment";
    })();
  const { country, currency, locale } = currencyMarket;
  const code = `${brand.prefix}-${country}-${String(index).padStart(width, "0")}`;
  const slug = brand.name.toLowerCase().replace(/[^a-z]/g, "");

  // Products 5 and 6 are, for the same reason, one not orderable and one disabled.
  const disabled = index === 6 || (index > 6 && chance(random, 0.04));
  const degraded = !disabled && index > 6 && chance(random, 0.03);
  const orderable = index !== 5 && !disabled && !(index > 6 && chance(random, 0.06));

  const countries = [country];
  for (const neighbour of currencyMarket.neighbours) {
    if (chance(random, 0.4)) countries.push(neighbour);
  }
  const categories = [...brand.categories];
  if (categories.length > 1 && chance(random, 0.4)) categories.pop();

  const product: Product = {
    approval_state: chance(random, 0.1) ? "REQUIRES_CUSTOMER_ACTION" : "APPROVED",
    categories,
    code,
    countries_redeemable_in: countries,
    currency,
    customer_service: {
      phone_number: chance(random, 0.4)
        ? null
        : `+1-800-${String(randomInt(random, 0, 9999999)).padStart(7, "0")}`,
      website_url: maybeUrl(random, `https://${slug}.example.com/help`, 0.3),
    },
    discount_multiplier: discountMultiplier(random),
    name: `${brand.name} ${country}${kind === "subscription" ? " Subscription" : ""}`,
    state: disabled ? "TEMPORARILY_DISABLED" : degraded ? "TEMPORARILY_DEGRADED" : "LIVE",
    is_orderable: orderable,
    payout_type:
      kind === "subscription" ? "subscription" : kind === "payment" ? "payment" : "gift_card",
    availability: chance(random, 0.7) ? "stocked" : "realtime",
  };

  const factor = majorFactor(currency);
  if (kind === "open") {
    const min = pick(random, [1, 5, 10]);
    const max = pick(random, [100, 250, 500, 1000]);
    product.gift_card = {
      ...payoutBase(random, code, slug, locale),
      denominations: {
        type: "open",
        minimum_value: money(min * factor, currency),
        maximum_value: money(max * factor, currency),
        available_list: null,
      },
    };
  } else if (kind === "fixed") {
    const list = fixedList(random, currency);
    product.gift_card = {
      ...payoutBase(random, code, slug, locale),
      denominations: {
        type: "fixed",
        minimum_value: list[0] as string,
        maximum_value: list[list.length - 1] as string,
        available_list: list,
      },
    };
  } else if (kind === "subscription") {
    product.subscription = {
      ...payoutBase(random, code, slug, locale),
      subscription_plans: subscriptionPlans(random, code, currency),
    };
  } else {
    product.payment = {
      assets: {
        icon_image_url: `https://assets.sandbox.invalid/products/${code}/icon.png`,
        primary_color: color(random),
      },
      denominations: {
        minimum_value: money(1 * factor, currency),
        maximum_value: money(pick(random, [500, 1000, 2000]) * factor, currency),
      },
      content_resources: contentResources(
        random,
        `https://content.sandbox.invalid/${code}`,
        locale,
      ),
    };
  }
  return product;
}

/**
 * A catalog of `products` products, sorted by code, the same for the same count and seed.
 * Gift cards (open and fixed), subscriptions with plans and payment products, in several
 * currencies and countries; some not orderable or disabled; nulls where real data has them.
 */
export function generateCatalog(options: GenerateCatalogOptions = {}): Product[] {
  const count = options.products ?? 250;
  const random = mulberry32(options.seed ?? 1);
  const width = codeWidth(count);
  const products: Product[] = [];
  for (let index = 0; index < count; index++) products.push(generateProduct(random, index, width));
  return sortByCode(products);
}

/** Plain code-unit order: the order of the cursors and of the binary searches. */
export function compareCodes(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function sortByCode(products: Product[]): Product[] {
  return products.sort((a, b) => compareCodes(a.code, b.code));
}

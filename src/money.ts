/**
 * Exact decimal money. Amounts are decimal strings at the edges and scaled bigints inside;
 * floats are never summed.
 */

const PLAIN_DECIMAL = /^(0|[1-9]\d*)(?:\.(\d+))?$/;

/** Minor-unit digits per currency (ISO 4217); anything not listed has 2. */
const CURRENCY_DECIMALS: Record<string, number> = {
  JPY: 0,
  KRW: 0,
  VND: 0,
  CLP: 0,
  ISK: 0,
  HUF: 2,
  KWD: 3,
  BHD: 3,
  JOD: 3,
  OMR: 3,
  TND: 3,
};

/** The currencies whose minor unit is not 2 digits, with theirs (for the ledger's scripts). */
export function unusualCurrencyDecimals(): Readonly<Record<string, number>> {
  return CURRENCY_DECIMALS;
}

export function currencyDecimals(currency: string): number {
  return CURRENCY_DECIMALS[currency.toUpperCase()] ?? 2;
}

/** True for a plain non-negative decimal: digits, optional dot and digits. No sign, exponent or separators. */
export function isPlainDecimal(text: string): boolean {
  return PLAIN_DECIMAL.test(text);
}

/** Number of digits after the decimal point of a plain decimal string. */
export function decimalPlaces(text: string): number {
  const dot = text.indexOf(".");
  return dot === -1 ? 0 : text.length - dot - 1;
}

/** Parses a plain decimal into integer units at `scale` digits; throws when it has more digits. */
export function toUnits(text: string, scale: number): bigint {
  const match = PLAIN_DECIMAL.exec(text);
  if (!match) throw new RangeError(`not a plain decimal: ${JSON.stringify(text)}`);
  const whole = match[1] ?? "0";
  const fraction = match[2] ?? "";
  if (fraction.length > scale) {
    const extra = fraction.slice(scale);
    if (/[^0]/.test(extra)) throw new RangeError(`${text} has more than ${scale} decimals`);
  }
  return BigInt(whole + fraction.slice(0, scale).padEnd(scale, "0"));
}

/** Formats integer units at `scale` digits as a decimal string ("1234", 2 -> "12.34"). */
export function fromUnits(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, "0");
  const whole = digits.slice(0, digits.length - scale);
  const fraction = scale > 0 ? `.${digits.slice(digits.length - scale)}` : "";
  return `${negative ? "-" : ""}${whole}${fraction}`;
}

/** Compares two plain decimals exactly: -1, 0 or 1. */
export function compareDecimal(a: string, b: string): number {
  const scale = Math.max(decimalPlaces(a), decimalPlaces(b));
  const x = toUnits(a, scale);
  const y = toUnits(b, scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Multiplies an amount by a decimal rate and rounds half-up to `scale` digits.
 * Used for discounts: discount = faceValue x discount_multiplier.
 */
export function multiplyRounded(amount: string, rate: string, scale: number): bigint {
  const rateScale = decimalPlaces(rate);
  const amountScale = decimalPlaces(amount);
  const product = toUnits(amount, amountScale) * toUnits(rate, rateScale);
  const productScale = amountScale + rateScale;
  if (productScale <= scale) return product * 10n ** BigInt(scale - productScale);
  const divisor = 10n ** BigInt(productScale - scale);
  return (product + divisor / 2n) / divisor;
}

/**
 * The price paid for a face value after the product's discount, as units at the currency's scale.
 * price = face_value - round(face_value x discount_multiplier).
 */
export function discountedPriceUnits(
  faceValue: string,
  discountMultiplier: string,
  currency: string,
): bigint {
  const scale = currencyDecimals(currency);
  const face = toUnits(faceValue, scale);
  const discount = multiplyRounded(faceValue, discountMultiplier || "0", scale);
  return face - discount;
}

/**
 * The canonical spelling of a plain decimal: no trailing fractional zeros, no bare dot
 * ("10.50" -> "10.5", "10.00" -> "10"). Equal amounts spell the same, so hashes of rows agree.
 */
export function canonicalDecimal(text: string): string {
  if (text === lastDecimal) return lastCanonical;
  if (!isPlainDecimal(text)) throw new RangeError(`not a plain decimal: ${JSON.stringify(text)}`);
  const canonical = text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text;
  lastDecimal = text;
  lastCanonical = canonical;
  return canonical;
}

/**
 * Whether a plain decimal survives the trip through a JSON number, the form the service takes a
 * face value in: `25.50` does, a 20-digit amount would be sent rounded.
 */
export function sendsExactly(decimal: string): boolean {
  return String(Number(decimal)) === canonicalDecimal(decimal);
}

/**
 * The last answer of canonicalDecimal: a row's face value is asked for by the preflight, the
 * payload hash and the paid fingerprint one after another, and a big file repeats a few values.
 */
let lastDecimal: string | undefined;
let lastCanonical = "";

/**
 * An amount as money is shown, in its currency's minor units ("25" USD -> "25.00", "12.5" ->
 * "12.50", "1000" JPY -> "1000"), whatever spelled it (docs/order-files.md, "Money as money").
 * Text that is no such amount (too many decimals, not a decimal, no currency) is left as it is.
 */
export function shownMoney(amount: string, currency: string | undefined): string {
  if (!currency || !isPlainDecimal(amount)) return amount;
  const scale = currencyDecimals(currency);
  const [, fraction = ""] = amount.split(".");
  // More decimals than the currency has, other than zeros: not an amount of it.
  if (/[^0]/.test(fraction.slice(scale))) return amount;
  return fromUnits(toUnits(amount, scale), scale);
}

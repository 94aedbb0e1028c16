/**
 * A currency named in a header, as a finance sheet writes it: `Amount (USD)`, `Value EUR`,
 * `Betrag (€)` (docs/order-files.md, "The currency in a header"). The header is then the face
 * value's, and each row's product must be of that currency.
 */

/** Symbols read as one currency; `$` alone is left unread, since dollars are many. */
const SYMBOLS: Readonly<Record<string, string | undefined>> = {
  "€": "EUR",
  "£": "GBP",
  "¥": "JPY",
  us$: "USD",
  $: undefined,
};

const CODES: ReadonlySet<string> = new Set(Intl.supportedValuesOf("currency"));

/** A header split into its name and the currency after it (undefined for `$`). */
export interface HeaderCurrency {
  base: string;
  currency: string | undefined;
}

/**
 * The name and currency of a header ending in one: in brackets (`(USD)`, `[€]`, `(usd)`) or
 * after a space (`Value EUR`, `Betrag €`); an unbracketed code must be in capitals, so that a
 * word such as "all" is not read as a currency.
 */
export function splitHeaderCurrency(header: string): HeaderCurrency | undefined {
  const name = header.trim();
  const bracketed = /^(.*\S)\s*[([]\s*([^()[\]\s]+)\s*[)\]]$/u.exec(name);
  const spaced = /^(.*\S)\s+(\S+)$/u.exec(name);
  for (const [match, capitals] of [
    [bracketed, false],
    [spaced, true],
  ] as const) {
    if (!match) continue;
    const currency = currencyOf(match[2]!, capitals);
    if (currency !== null) return { base: match[1]!, currency };
  }
  return undefined;
}

/** The currency a token names: a code, a symbol (undefined for `$`), or null for neither. */
function currencyOf(token: string, capitals: boolean): string | undefined | null {
  const lower = token.toLowerCase();
  if (Object.hasOwn(SYMBOLS, lower)) return SYMBOLS[lower];
  const upper = token.toUpperCase();
  if (!CODES.has(upper) || (capitals && token !== upper)) return null;
  return upper;
}

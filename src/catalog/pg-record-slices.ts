/**
 * Each product's JSON text cut out of a page's text (FetchedPage.text: the products' texts as
 * received, joined by commas on one line), so that the database sync sends PostgreSQL the bytes
 * the service sent for each record instead of serialising every product again and converting
 * the string back to bytes (about 0.7 s of CPU in a sync of 100,000 products;
 * docs/benchmarks.md, "The catalog in PostgreSQL: figures"). PostgreSQL parses the text into
 * `record` (jsonb), which keeps the same values whatever their spelling.
 *
 * Returns one slice per product, in order, or undefined when the text does not split into
 * exactly `count` objects: the caller then serialises the page's products itself. The text was
 * accepted by JSON.parse, so the scan only needs to follow strings and nesting. The slices share
 * memory with `text`.
 */
export function recordSlices(text: Buffer, count: number): Buffer[] | undefined {
  const slices: Buffer[] = [];
  const length = text.length;
  let depth = 0;
  let start = -1;
  for (let i = 0; i < length; i++) {
    const c = text[i] as number;
    if (c === QUOTE) {
      // Most of a product's bytes are in strings: a native search finds their ends.
      i = closingQuote(text, i);
      if (i < 0 || depth === 0) return undefined;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (depth === 0) {
        if (c !== OPEN_BRACE) return undefined;
        start = i;
      }
      depth += 1;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth -= 1;
      if (depth < 0) return undefined;
      if (depth === 0) slices.push(text.subarray(start, i + 1));
    } else if (depth === 0 && c !== COMMA && !isWhitespace(c)) {
      return undefined; // a number or a literal as an element: not a product
    }
  }
  return depth === 0 && slices.length === count ? slices : undefined;
}

/** The index of the quote closing the string opened at `open`, or -1. */
function closingQuote(text: Buffer, open: number): number {
  let at = open;
  for (;;) {
    at = text.indexOf(QUOTE, at + 1);
    if (at < 0) return -1;
    let backslashes = 0;
    for (let j = at - 1; text[j] === BACKSLASH; j--) backslashes += 1;
    if (backslashes % 2 === 0) return at;
  }
}

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

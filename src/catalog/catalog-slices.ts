import { isUtf8 } from "node:buffer";

/**
 * Each product's own JSON text, cut out of a catalog page's body: what the sync writes to
 * products.json instead of JSON.stringify(product), so that a product is stored byte for byte
 * as the service sent it (escapes, number spellings and all) and is never serialised again.
 * Only pages not in the usual shape need it (see receivePage): a usual page is stored whole.
 *
 * Returns one entry per element of the page's top-level `catalog` array, in order; an entry is
 * undefined when that element cannot be stored as one line as received (its text spans lines
 * or holds another control character between tokens: pretty-printed JSON), and the caller then
 * serialises that product itself. Returns undefined for the whole page when the bytes are not
 * valid UTF-8 (the parsed products then hold U+FFFD where the bytes do not) or have no
 * top-level `catalog` array.
 *
 * `bytes` must be JSON that JSON.parse accepted (after UTF-8 decoding): the scan tracks only
 * strings, nesting and commas, and relies on the text being well formed. With a key given
 * twice, JSON.parse keeps the last, and so does this. The slices share memory with `bytes`.
 */
export function catalogSlices(bytes: Buffer): (Buffer | undefined)[] | undefined {
  if (!isUtf8(bytes)) return undefined;
  const length = bytes.length;
  let depth = 0;
  let topIsObject = false;
  // At depth 1 of the top-level object: whether the next string is a key, and whether the
  // value being read belongs to a "catalog" key.
  let expectKey = false;
  let catalogValue = false;
  let result: (Buffer | undefined)[] | undefined;
  for (let i = 0; i < length; i++) {
    const c = bytes[i] as number;
    if (c === QUOTE) {
      const start = i;
      i = closingQuote(bytes, i);
      if (i < 0) return undefined;
      if (depth === 1 && topIsObject) {
        if (expectKey) {
          expectKey = false;
          catalogValue = isCatalogKey(bytes, start, i);
          if (catalogValue) result = undefined; // the last "catalog" decides, as in JSON.parse
        } else {
          catalogValue = false;
        }
      }
    } else if (c === OPEN_BRACKET && depth === 1 && topIsObject && catalogValue) {
      // The catalog array: its elements are cut out up to its closing bracket.
      catalogValue = false;
      const scan = scanElements(bytes, i + 1);
      if (!scan || scan.end === length) return undefined;
      result = scan.slices.map((element) => (element.broken ? undefined : element.bytes));
      i = scan.end;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth += 1;
      if (depth === 1) {
        topIsObject = c === OPEN_BRACE;
        expectKey = topIsObject;
      } else if (depth === 2) {
        catalogValue = false;
      }
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth -= 1;
    } else if (c === COMMA && depth === 1 && topIsObject) {
      expectKey = true;
      catalogValue = false;
    }
  }
  return result;
}

/**
 * Each product's JSON text cut out of a page's text (FetchedPage.text: the products' texts as
 * received, joined by commas on one line), so that the database sync sends PostgreSQL the bytes
 * the service sent for each record instead of serialising every product again and converting
 * the string back to bytes (about 0.7 s of CPU in a sync of 100,000 products;
 * docs/benchmarks/earlier-rounds.md, "The catalog in PostgreSQL: figures"). PostgreSQL parses
 * the text into `record` (jsonb), which keeps the same values whatever their spelling.
 *
 * Returns one slice per product, in order, or undefined when the text does not split into
 * exactly `count` objects: the caller then serialises the page's products itself. The text was
 * accepted by JSON.parse, so the scan only needs to follow strings and nesting. The slices share
 * memory with `text`.
 */
export function recordSlices(text: Buffer, count: number): Buffer[] | undefined {
  const scan = scanElements(text, 0);
  // A bracket closing what was never opened ends the scan early: not a list of products.
  if (!scan || scan.end !== text.length || scan.slices.length !== count) return undefined;
  const slices: Buffer[] = [];
  for (const { bytes } of scan.slices) {
    // A number, a string or a literal as an element: not a product.
    if (bytes[0] !== OPEN_BRACE) return undefined;
    slices.push(bytes);
  }
  return slices;
}

/**
 * One element of a JSON list: its bytes, without the whitespace around them, and whether a line
 * break (or another control character) stands between its tokens, so that it cannot be stored
 * on one line as it is.
 */
interface ElementSlice {
  bytes: Buffer;
  broken: boolean;
}

/**
 * The byte scanner both callers share: the elements of a list of JSON values separated by
 * commas, from `from` up to the bracket that closes the list (an array's contents) or the end of
 * `bytes` (values joined by commas). `end` is the index of that bracket, or bytes.length.
 * Undefined when a string is not closed. The text must be JSON that JSON.parse accepted: the scan
 * follows only strings, nesting and commas.
 */
function scanElements(
  bytes: Buffer,
  from: number,
): { slices: ElementSlice[]; end: number } | undefined {
  const slices: ElementSlice[] = [];
  const length = bytes.length;
  let depth = 0;
  let start = -1;
  let broken = false;
  let i = from;
  for (; i < length; i++) {
    const c = bytes[i] as number;
    if (c === QUOTE) {
      if (start < 0) {
        start = i;
        broken = false;
      }
      i = closingQuote(bytes, i);
      if (i < 0) return undefined;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (start < 0) {
        start = i;
        broken = false;
      }
      depth += 1;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (depth === 0) break;
      depth -= 1;
    } else if (c === COMMA) {
      if (depth === 0) {
        slices.push(element(bytes, start, i, broken));
        start = -1;
      }
    } else if (c < SPACE) {
      // Whitespace between tokens (JSON allows no control character inside a string).
      if (depth > 0) broken = true;
    } else if (start < 0 && c !== SPACE) {
      // A number, true, false or null as an element.
      start = i;
      broken = false;
    }
  }
  // An element still open at the end of the bytes: the text is cut short.
  if (depth > 0) return undefined;
  if (start >= 0) slices.push(element(bytes, start, i, broken));
  return { slices, end: i };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const SPACE = 0x20;
const CATALOG = Buffer.from('"catalog"');

/** The index of the quote closing the string opened at `open`, or -1. */
function closingQuote(bytes: Buffer, open: number): number {
  let at = open;
  for (;;) {
    // Most of a product's bytes are in strings: a native search finds their ends.
    at = bytes.indexOf(QUOTE, at + 1);
    if (at < 0) return -1;
    let backslashes = 0;
    for (let j = at - 1; bytes[j] === BACKSLASH; j--) backslashes += 1;
    if (backslashes % 2 === 0) return at;
  }
}

/** Whether the string from `start` to `end` (its quotes) is "catalog", however it is escaped. */
function isCatalogKey(bytes: Buffer, start: number, end: number): boolean {
  if (
    end + 1 - start === CATALOG.length &&
    bytes.compare(CATALOG, 0, CATALOG.length, start, end + 1) === 0
  ) {
    return true;
  }
  for (let i = start + 1; i < end; i++) {
    if (bytes[i] === BACKSLASH)
      return JSON.parse(bytes.toString("utf8", start, end + 1)) === "catalog";
  }
  return false;
}

/** The element from `start` up to the separator at `end`, without the whitespace before it. */
function element(bytes: Buffer, start: number, end: number, broken: boolean): ElementSlice {
  let stop = end;
  while (stop > start && isWhitespace(bytes[stop - 1] as number)) stop -= 1;
  return { bytes: bytes.subarray(start, stop), broken };
}

/** JSON's whitespace between tokens. */
export function isWhitespace(c: number): boolean {
  return c === SPACE || c === 0x0a || c === 0x0d || c === 0x09;
}

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
  // While inside the catalog array: the slices so far, where the current element began (-1
  // before it begins) and whether it has a control character (a line break) between tokens.
  let collecting: (Buffer | undefined)[] | undefined;
  let elementStart = -1;
  let elementBroken = false;
  let result: (Buffer | undefined)[] | undefined;
  for (let i = 0; i < length; i++) {
    const c = bytes[i] as number;
    if (c === QUOTE) {
      const start = i;
      i = stringEnd(bytes, i);
      if (depth === 1 && topIsObject) {
        if (expectKey) {
          expectKey = false;
          catalogValue = isCatalogKey(bytes, start, i);
          if (catalogValue) result = undefined; // the last "catalog" decides, as in JSON.parse
        } else {
          catalogValue = false;
        }
      } else if (collecting && depth === 2 && elementStart < 0) {
        elementStart = start;
        elementBroken = false;
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (collecting && depth === 2 && elementStart < 0) {
        elementStart = i;
        elementBroken = false;
      }
      depth += 1;
      if (depth === 1) {
        topIsObject = c === OPEN_BRACE;
        expectKey = topIsObject;
      } else if (depth === 2 && topIsObject && catalogValue) {
        catalogValue = false;
        if (c === OPEN_BRACKET) {
          collecting = [];
          elementStart = -1;
        }
      }
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (collecting && depth === 2) {
        // The end of the catalog array.
        if (elementStart >= 0) collecting.push(slice(bytes, elementStart, i, elementBroken));
        result = collecting;
        collecting = undefined;
      }
      depth -= 1;
    } else if (c === COMMA) {
      if (depth === 1 && topIsObject) {
        expectKey = true;
        catalogValue = false;
      } else if (collecting && depth === 2) {
        collecting.push(slice(bytes, elementStart, i, elementBroken));
        elementStart = -1;
      }
    } else if (c < 0x20) {
      // Whitespace between tokens (JSON allows no control character inside a string).
      if (collecting && depth >= 3) elementBroken = true;
    } else if (collecting && depth === 2 && elementStart < 0 && c !== SPACE) {
      // A number, true, false or null as an element.
      elementStart = i;
      elementBroken = false;
    }
  }
  return result;
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

/** The index of the quote that closes the string opened at `start`. */
function stringEnd(bytes: Buffer, start: number): number {
  let i = start + 1;
  for (;;) {
    const c = bytes[i];
    if (c === QUOTE) return i;
    i += c === BACKSLASH ? 2 : 1;
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
function slice(bytes: Buffer, start: number, end: number, broken: boolean): Buffer | undefined {
  let stop = end;
  while (stop > start && isWhitespace(bytes[stop - 1] as number)) stop -= 1;
  return broken ? undefined : bytes.subarray(start, stop);
}

/** JSON's whitespace between tokens. */
export function isWhitespace(c: number): boolean {
  return c === SPACE || c === 0x0a || c === 0x0d || c === 0x09;
}

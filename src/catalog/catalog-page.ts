import { isUtf8 } from "node:buffer";
import { MalformedResponseError } from "../api/errors/index.js";
import type { RawProduct } from "../api/schemas.js";
import { catalogSlices, isWhitespace } from "./catalog-slices.js";

/** One page of GET /v2/product as the sync uses it. */
export interface FetchedPage {
  /** 1-based, counted from the start of the catalog (not of this run, when resuming). */
  number: number;
  /** The cursor this page was asked for; undefined for the first page. */
  requestedAfter: string | undefined;
  products: RawProduct[];
  /**
   * The products as one line of JSON, separated by commas: the text the service sent where it
   * can be stored as is (see pageText), so a product is never serialised again.
   */
  text: Buffer;
  /** The cursor of the next page. */
  after: string;
  /** X-Api-Version the service answered with. */
  apiVersion: string | null;
}

/** A page as received: its cursor is known, its products are parsed by complete(). */
export interface ReceivedPage {
  /** The cursor of the next page; "" when the page has none. */
  after: string;
  /** No products: the end of the catalog. */
  empty: boolean;
  /** Parses and checks the products; throws MalformedResponseError on a malformed page. */
  complete(): FetchedPage;
}

/** Where a page came from, for messages and for FetchedPage. */
export interface PageOrigin {
  number: number;
  requestedAfter: string | undefined;
  apiVersion: string | null;
}

const UTF8 = new TextDecoder();
const PREFIX = Buffer.from('{"catalog":[');
const MIDDLE = Buffer.from('],"pagination":');
const COMMA = Buffer.from(",");

/**
 * Reads a page's cursor first and its products later, so that the next page can be asked for
 * before the big JSON.parse. That needs the page in the service's usual shape,
 * `{"catalog":[…],"pagination":{…}}` without whitespace around those two keys: then the
 * pagination is the short text after the last `],"pagination":`, and the products are the text
 * between it and the start. Both are parsed on their own; when both parse, the body is exactly
 * that two-member object, so nothing is read in a way JSON.parse would not. Any other shape
 * (other keys, another order, pretty-printing) is parsed whole, as before.
 */
export function receivePage(bytes: Buffer, origin: PageOrigin): ReceivedPage {
  const envelope = splitEnvelope(bytes);
  if (!envelope) return receivedWhole(bytes, origin);
  const empty = isBlank(bytes, envelope.arrayStart + 1, envelope.arrayEnd - 1);
  // The cursor is checked before any product is parsed: the next request depends on it alone.
  const after = cursorOf(envelope.pagination, !empty, origin);
  return {
    after,
    empty,
    complete: () => {
      const catalog = empty ? [] : parseArray(bytes, envelope.arrayStart, envelope.arrayEnd);
      if (catalog === undefined) return wholeWithCursor(bytes, origin, after);
      const products = checkProducts(catalog, origin);
      const inner = bytes.subarray(envelope.arrayStart + 1, envelope.arrayEnd - 1);
      const text = oneLine(inner, bytes) ? inner : pageText(products, bytes);
      return { ...origin, products, after, text };
    },
  };
}

/**
 * The page parsed whole after all, where its products did not parse on their own; its cursor
 * must be the one read first, which the next request already went out with.
 */
function wholeWithCursor(bytes: Buffer, origin: PageOrigin, after: string): FetchedPage {
  const page = receivedWhole(bytes, origin).complete();
  if (page.after !== after) {
    throw malformed(
      "malformed_page",
      `${where(origin)}: the pagination could not be read reliably`,
    );
  }
  return page;
}

/** The page parsed whole: any shape JSON.parse accepts. */
function receivedWhole(bytes: Buffer, origin: PageOrigin): ReceivedPage {
  let body: unknown;
  try {
    const text = UTF8.decode(bytes);
    body = text === "" ? null : JSON.parse(text);
  } catch {
    throw malformed("malformed_response", `${where(origin)}: the body is not JSON`);
  }
  const page = body as { catalog?: unknown; pagination?: unknown };
  if (page === null || typeof page !== "object" || !Array.isArray(page.catalog)) {
    throw malformed("malformed_page", `${where(origin)}: the response has no catalog array`);
  }
  const products = checkProducts(page.catalog, origin);
  const after = cursorOf(page.pagination, products.length > 0, origin);
  return {
    after,
    empty: products.length === 0,
    complete: () => ({ ...origin, products, after, text: pageText(products, bytes) }),
  };
}

interface Envelope {
  /** The `[` and one past the `]` of the catalog array. */
  arrayStart: number;
  arrayEnd: number;
  pagination: unknown;
}

/** The two parts of a page in the usual shape, with the pagination parsed; else undefined. */
function splitEnvelope(bytes: Buffer): Envelope | undefined {
  if (bytes.length < PREFIX.length || bytes.compare(PREFIX, 0, PREFIX.length, 0, PREFIX.length))
    return undefined;
  let end = bytes.length;
  while (end > 0 && isWhitespace(bytes[end - 1] as number)) end -= 1;
  if (bytes[end - 1] !== 0x7d /* } */) return undefined;
  const middle = bytes.lastIndexOf(MIDDLE, end);
  if (middle < PREFIX.length - 1) return undefined;
  try {
    // Parses only when the `],"pagination":` found closes the top-level catalog array: one
    // inside a product would leave that product's closing brackets in this text.
    const pagination = JSON.parse(UTF8.decode(bytes.subarray(middle + MIDDLE.length, end - 1)));
    return { arrayStart: PREFIX.length - 1, arrayEnd: middle + 1, pagination };
  } catch {
    return undefined;
  }
}

function parseArray(bytes: Buffer, start: number, end: number): unknown[] | undefined {
  try {
    return JSON.parse(UTF8.decode(bytes.subarray(start, end))) as unknown[];
  } catch {
    return undefined;
  }
}

/** Whether `inner`, a part of `bytes`, can be stored as one line exactly as received. */
function oneLine(inner: Buffer, bytes: Buffer): boolean {
  // Bytes that are not UTF-8 were decoded to U+FFFD: storing them would not be what was parsed.
  return inner.indexOf(0x0a) === -1 && isUtf8(bytes);
}

/**
 * The products as one line: each one's text as received where catalogSlices can cut it out
 * (and it is on one line), else JSON.stringify(product).
 */
function pageText(products: readonly unknown[], bytes: Buffer): Buffer {
  const slices = products.length > 0 ? catalogSlices(bytes) : undefined;
  // The slices come from the same bytes as the parsed products; a count that differs would
  // mean the scan is wrong, and then nothing of it is used.
  const usable = slices && slices.length === products.length && slices.every(isObjectText);
  const parts: Buffer[] = [];
  products.forEach((product, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push((usable && slices[i]) || Buffer.from(JSON.stringify(product), "utf8"));
  });
  return Buffer.concat(parts);
}

/** An object's text: each product is one (checkProducts made sure it has a code). */
function isObjectText(text: Buffer | undefined): boolean {
  return text === undefined || (text[0] === 0x7b && text[text.length - 1] === 0x7d);
}

/**
 * Checks the products by hand rather than with the zod page schema: that schema copies every
 * product, and a sync of 100k products should only pay for looking at them once.
 */
function checkProducts(catalog: unknown[], origin: PageOrigin): RawProduct[] {
  for (const [i, product] of catalog.entries()) {
    const code = (product as { code?: unknown } | null)?.code;
    if (typeof code !== "string" || code === "") {
      throw malformed("malformed_page", `${where(origin)}: catalog[${i}] has no product code`);
    }
  }
  return catalog as RawProduct[];
}

/** pagination.cursors.after, which a page with products must have. */
function cursorOf(pagination: unknown, hasProducts: boolean, origin: PageOrigin): string {
  const next = (pagination as { cursors?: { after?: unknown } } | null)?.cursors?.after;
  if (hasProducts && (typeof next !== "string" || next === "")) {
    throw malformed("malformed_page", `${where(origin)}: products but no pagination.cursors.after`);
  }
  return typeof next === "string" ? next : "";
}

function where(origin: PageOrigin): string {
  const after = origin.requestedAfter;
  return `page ${origin.number} (after ${after === undefined ? "the start" : JSON.stringify(after)})`;
}

function isBlank(bytes: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (!isWhitespace(bytes[i] as number)) return false;
  return true;
}

/** A page the sync cannot use: the run stops with this error's message. */
export function malformed(type: string, message: string): MalformedResponseError {
  return new MalformedResponseError({ status: 200, type, message });
}

import { mulberry32, type Random } from "./prng.js";

/** How a GET /v2/product page can be broken on purpose. */
type PageFaultKind = "500" | "stuck_cursor" | "malformed";

interface ProductPageFault {
  /**
   * The `after` cursor of the request to break; null or absent: the first page (no cursor).
   */
  after?: string | null;
  /** 500: internal_server_error; stuck_cursor: the page's `after` is the request's own cursor;
   * malformed: a 200 whose body is truncated JSON. */
  kind: PageFaultKind;
  /** How many times it fires before it clears itself; absent: until changed. */
  times?: number;
}

/** Faults and limits that can change while the sandbox runs (POST /_sandbox/faults). */
export interface Faults {
  /** Share of POST /v2/order answered 500 before anything is done. @defaultValue 0 */
  failRate: number;
  /** Share of created orders whose connection is destroyed instead of answered. @defaultValue 0 */
  dropRate: number;
  /**
   * Share of created orders answered with a 5xx (`failAfterStatus`) instead of their answer:
   * the order exists and its key is recorded, so the same key and body replay the real answer.
   * @defaultValue 0
   */
  failAfterRate: number;
  /** The status of `failAfterRate`'s answers: 500 internal_server_error or 504 timeout. @defaultValue 500 */
  failAfterStatus: 500 | 504;
  /**
   * E-mail addresses the service refuses: an order with an item sent to one of them is answered
   * 422 validation_error naming that item, recorded under its key like any refusal of the body.
   * @defaultValue []
   */
  refuseEmails: string[];
  /** Delay of every /v2 request, with ±20% jitter. @defaultValue 0 */
  latencyMs: number;
  /** POST /v2/order per sliding minute. @defaultValue 300 */
  orderRateLimit: number;
  /** Time an async order stays PROCESSING; 0: completed on the next read. @defaultValue 1000 */
  asyncCompleteMs: number;
  /** Share of async orders that end FAILED instead of COMPLETED (refunded). @defaultValue 0 */
  asyncFailRate: number;
  /**
   * Share of POST /v2/order/estimate answered 500 internal_server_error: a price estimate the
   * service cannot give (the import falls back to its own prices). @defaultValue 0
   */
  estimateFailRate: number;
  /** A broken product page, or null. @defaultValue null */
  productPageFault: ProductPageFault | null;
  /** What the cursors of an empty page hold: omitted (the OpenAPI types them as strings) or
   * null. @defaultValue "omit" */
  emptyPageCursors: "omit" | "null";
}

export const DEFAULT_FAULTS: Faults = {
  failRate: 0,
  dropRate: 0,
  failAfterRate: 0,
  failAfterStatus: 500,
  refuseEmails: [],
  latencyMs: 0,
  orderRateLimit: 300,
  asyncCompleteMs: 1000,
  asyncFailRate: 0,
  estimateFailRate: 0,
  productPageFault: null,
  emptyPageCursors: "omit",
};

/** The JSON names of POST /_sandbox/faults, mapped to the option names. */
const JSON_NAMES: Record<string, keyof Faults> = {
  fail_rate: "failRate",
  drop_rate: "dropRate",
  fail_after_rate: "failAfterRate",
  fail_after_status: "failAfterStatus",
  refuse_emails: "refuseEmails",
  latency_ms: "latencyMs",
  order_rate_limit: "orderRateLimit",
  async_complete_ms: "asyncCompleteMs",
  async_fail_rate: "asyncFailRate",
  estimate_fail_rate: "estimateFailRate",
  product_page_fault: "productPageFault",
  empty_page_cursors: "emptyPageCursors",
};

function rate(name: string, value: unknown): number {
  if (typeof value !== "number" || !(value >= 0 && value <= 1)) {
    throw new RangeError(`${name} must be a number from 0 to 1`);
  }
  return value;
}

function whole(name: string, value: unknown, min: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min) {
    throw new RangeError(`${name} must be a whole number >= ${min}`);
  }
  return value;
}

function failStatus(name: string, value: unknown): 500 | 504 {
  if (value !== 500 && value !== 504) throw new RangeError(`${name} must be 500 or 504`);
  return value;
}

function emails(name: string, value: unknown): string[] {
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) {
    throw new RangeError(`${name} must be a list of e-mail addresses`);
  }
  return [...value];
}

function pageFault(value: unknown): ProductPageFault | null {
  if (value === null) return null;
  const v = value as Record<string, unknown>;
  if (typeof v !== "object" || !["500", "stuck_cursor", "malformed"].includes(String(v.kind))) {
    throw new RangeError('product_page_fault.kind must be "500", "stuck_cursor" or "malformed"');
  }
  if (v.after !== undefined && v.after !== null && typeof v.after !== "string") {
    throw new RangeError("product_page_fault.after must be a product code or null");
  }
  const fault: ProductPageFault = {
    after: (v.after as string | null) ?? null,
    kind: v.kind as PageFaultKind,
  };
  if (v.times !== undefined) fault.times = whole("product_page_fault.times", v.times, 1);
  return fault;
}

/**
 * Validates a partial update, given with option names (camelCase) or JSON names (snake_case).
 * Throws a RangeError naming the field.
 */
export function parseFaults(input: Record<string, unknown>): Partial<Faults> {
  const out: Partial<Faults> = {};
  for (const [rawName, value] of Object.entries(input)) {
    if (value === undefined) continue;
    const name =
      JSON_NAMES[rawName] ?? (rawName in DEFAULT_FAULTS ? (rawName as keyof Faults) : undefined);
    if (!name) throw new RangeError(`unknown fault setting ${rawName}`);
    if (
      name === "failRate" ||
      name === "dropRate" ||
      name === "failAfterRate" ||
      name === "asyncFailRate" ||
      name === "estimateFailRate"
    )
      out[name] = rate(rawName, value);
    else if (name === "failAfterStatus") out[name] = failStatus(rawName, value);
    else if (name === "refuseEmails") out[name] = emails(rawName, value);
    else if (name === "latencyMs" || name === "asyncCompleteMs")
      out[name] = whole(rawName, value, 0);
    else if (name === "orderRateLimit") out[name] = whole(rawName, value, 1);
    else if (name === "productPageFault") out[name] = pageFault(value);
    else if (value === "omit" || value === "null") out.emptyPageCursors = value;
    else throw new RangeError(`${rawName} must be "omit" or "null"`);
  }
  return out;
}

/** Faults as JSON (snake_case), for GET and POST /_sandbox/faults. */
export function faultsToJson(faults: Faults): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [json, name] of Object.entries(JSON_NAMES)) out[json] = faults[name];
  return out;
}

/** Seeded draws of the faults: the same seed and request sequence give the same faults. */
export class FaultDice {
  private orders: Random;
  private jitter: Random;

  constructor(private readonly seed: number) {
    this.orders = mulberry32(seed);
    this.jitter = mulberry32(seed ^ 0x5bd1e995);
  }

  reset(): void {
    this.orders = mulberry32(this.seed);
    this.jitter = mulberry32(this.seed ^ 0x5bd1e995);
  }

  roll(probability: number): boolean {
    // Draw only when the fault is on, so that turning one on does not shift the other's sequence.
    return probability > 0 && this.orders() < probability;
  }

  latency(ms: number): number {
    if (ms <= 0) return 0;
    return Math.round(ms * (0.8 + 0.4 * this.jitter()));
  }
}

import type { CatalogIndex } from "../../catalog/index-entry.js";

/** Plan codes named in a subscription hint, and codes in a "did you mean". */
const LISTED = 3;
/** Distinct unknown codes whose message is remembered; past it, messages are worked out again. */
const MEMO_LIMIT = 10_000;

/**
 * True when `a` becomes `b` by one insertion, deletion or substitution (or none).
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function withinOneEdit(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (a.length === b.length) return a.slice(i + 1) === b.slice(i + 1);
  return a.length > b.length ? a.slice(i + 1) === b.slice(i) : a.slice(i) === b.slice(i + 1);
}

/**
 * What to say about a product code the snapshot does not hold. Built on the first unknown code
 * from one pass over the index; each distinct code's message is remembered, since a file of a
 * million rows repeats its few codes. The edit-distance search runs only for a code that is
 * neither a subscription nor a known code in another case, and only over codes of its length
 * ±1.
 */
class CodeHints {
  /** Lower-cased code -> code, for the index's codes. */
  private readonly byLower = new Map<string, string>();
  /** Lower-cased subscription product code -> the product code and its plan codes. */
  private readonly subscriptions = new Map<string, { code: string; plans: string[] }>();
  /** Code length -> lower-cased codes of that length. */
  private readonly byLength = new Map<number, string[]>();
  private readonly memo = new Map<string, string>();

  constructor(catalog: CatalogIndex) {
    for (const [code, entry] of Object.entries(catalog.entries)) {
      const lower = code.toLowerCase();
      this.byLower.set(lower, code);
      const same = this.byLength.get(lower.length);
      if (same) same.push(lower);
      else this.byLength.set(lower.length, [lower]);
      if (entry.plan_of !== undefined) {
        const product = entry.plan_of.toLowerCase();
        const known = this.subscriptions.get(product);
        if (known) known.plans.push(code);
        else this.subscriptions.set(product, { code: entry.plan_of, plans: [code] });
      }
    }
  }

  message(code: string): string {
    const known = this.memo.get(code);
    if (known !== undefined) return known;
    const message = this.work(code);
    if (this.memo.size < MEMO_LIMIT) this.memo.set(code, message);
    return message;
  }

  private work(code: string): string {
    const lower = code.toLowerCase();
    const subscription = this.subscriptions.get(lower);
    if (subscription) {
      const plans = subscription.plans.slice(0, LISTED).join(", ");
      return `${subscription.code} is a subscription: order one of its plans, e.g. ${plans}`;
    }
    const unknown = `unknown product code ${code}`;
    const cased = this.byLower.get(lower);
    if (cased !== undefined) return `${unknown}: did you mean ${cased}?`;
    const near: string[] = [];
    search: for (let length = lower.length - 1; length <= lower.length + 1; length++) {
      for (const candidate of this.byLength.get(length) ?? []) {
        if (!withinOneEdit(lower, candidate)) continue;
        near.push(this.byLower.get(candidate)!);
        if (near.length > LISTED) break search;
      }
    }
    if (near.length === 0) return unknown;
    const listed = near.slice(0, LISTED).sort();
    return `${unknown}: did you mean ${listed.join(" or ")}${near.length > LISTED ? " (or another)" : ""}?`;
  }
}

const HINTS = new WeakMap<CatalogIndex, CodeHints>();

/**
 * The message for a product code `catalog` does not hold: a subscription names its plans, a
 * code in the wrong case or one edit away from a known code suggests it.
 */
export function unknownCodeMessage(catalog: CatalogIndex, code: string): string {
  let hints = HINTS.get(catalog);
  if (!hints) {
    hints = new CodeHints(catalog);
    HINTS.set(catalog, hints);
  }
  return hints.message(code);
}

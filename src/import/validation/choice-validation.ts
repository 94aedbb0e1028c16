import { canonicalDecimal } from "../../money.js";
import { DISTRIBUTIONS, type Distribution, type OrderRow } from "../../orders/order-row.js";
import { quoted } from "../../orders/quoted.js";

/**
 * The cells of a row that say how its link is sent and what it is redeemed on: `distribution`,
 * `recipient_reference`, `product_code` / `product_codes` / `selection_template_id`, `currency`
 * (docs/order-files.md, "Distribution and product choice"). Each check returns what it read, or
 * the problems, each naming its column, so validateRow lists them all at once.
 */

/** The one separator of product_codes: `;` separates cells in a `;` file, `,` in the others. */
const PRODUCT_CODES_SEPARATOR = "|";

/**
 * The service's rule for a recipient reference (OpenAPI RecipientDistribution,
 * `recipient_reference`): 1 to 255 of letters, digits, `-`, `_`, `@` and `.`.
 */
const RECIPIENT_REFERENCE = /^[A-Za-z0-9\-_@.]+$/;
const RECIPIENT_REFERENCE_CHARS = 255;

const CURRENCY = /^[A-Za-z]{3}$/;

export interface Problem {
  column: string;
  message: string;
}

/** The product part of a row: one code, a choice of codes, or a selection template. */
export type ProductChoiceCells = Pick<
  OrderRow,
  "product_code" | "product_codes" | "selection_template_id"
>;

/** The distribution a row asks for: its own cell (any case), else the import's default. */
export function distributionOf(
  cell: string | undefined,
  fallback: Distribution | undefined,
): { value: Distribution } | { problem: Problem } {
  const own = cell?.trim().toLowerCase();
  if (!own) return { value: fallback ?? "email" };
  if ((DISTRIBUTIONS as readonly string[]).includes(own)) return { value: own as Distribution };
  const got = quoted(cell ?? "");
  const message = `distribution must be ${DISTRIBUTIONS.join(", ")} (got ${got})`;
  return { problem: { column: "distribution", message } };
}

/**
 * What a row's distribution asks of its e-mail: a link row sends none, and one given is refused
 * rather than silently dropped (a reader of the file would expect a mail to go).
 */
export function linkEmailProblem(distribution: Distribution, email: string): string | undefined {
  if (distribution !== "link" || email === "") return undefined;
  return (
    "email must be empty on a link row: nothing is mailed, the payout link is yours to hand " +
    "out (giftjobs orders links); to have it mailed, set distribution email or recipient"
  );
}

/** A recipient row's reference, checked by the service's rule; none on other rows. */
export function recipientReferenceOf(
  cell: string | undefined,
  distribution: Distribution,
): { value: string | undefined } | { problem: Problem } {
  const reference = cell?.trim() || undefined;
  const fail = (message: string) => ({ problem: { column: "recipient_reference", message } });
  if (distribution !== "recipient") {
    if (reference === undefined) return { value: undefined };
    return fail("recipient_reference is only read on a recipient row (distribution recipient)");
  }
  if (reference === undefined) return fail("recipient_reference is required on a recipient row");
  if ([...reference].length > RECIPIENT_REFERENCE_CHARS)
    return fail(`recipient_reference is longer than ${RECIPIENT_REFERENCE_CHARS} characters`);
  if (!RECIPIENT_REFERENCE.test(reference))
    return fail(
      `recipient_reference may hold only letters, digits and - _ @ . (got ${quoted(reference)})`,
    );
  return { value: reference };
}

/** product_codes as written: two or more distinct codes between `|`, each trimmed. */
function productCodesOf(cell: string): { value: string[] } | { problem: Problem } {
  const codes = cell.split(PRODUCT_CODES_SEPARATOR).map((code) => code.trim());
  const fail = (message: string) => ({ problem: { column: "product_codes", message } });
  if (codes.length < 2)
    return fail(
      `product_codes needs two or more codes separated by '${PRODUCT_CODES_SEPARATOR}' ` +
        `(got ${quoted(cell)}); for one product use product_code`,
    );
  if (codes.some((code) => code === ""))
    return fail(`product_codes has an empty code (got ${quoted(cell)})`);
  const twice = codes.find((code, i) => codes.indexOf(code) !== i);
  if (twice !== undefined) return fail(`product_codes names ${quoted(twice)} twice`);
  return { value: codes };
}

const PRODUCT_COLUMNS = ["product_code", "product_codes", "selection_template_id"] as const;

/** Exactly one of product_code, product_codes and selection_template_id, read. */
export function productChoiceOf(
  fields: Record<string, string>,
): { value: ProductChoiceCells } | { problem: Problem } {
  const given = PRODUCT_COLUMNS.filter((column) => (fields[column] ?? "").trim() !== "");
  if (given.length === 0) {
    const message = "product_code is required (or product_codes, or selection_template_id)";
    return { problem: { column: "product_code", message } };
  }
  if (given.length > 1) {
    const message =
      "give one of product_code, product_codes and selection_template_id " +
      `(this row has ${given.join(" and ")})`;
    return { problem: { column: given[1]!, message } };
  }
  const [column] = given;
  const cell = fields[column!]!.trim();
  if (column === "product_code") return { value: { product_code: fields.product_code ?? "" } };
  if (column === "selection_template_id")
    return { value: { product_code: "", selection_template_id: cell } };
  const codes = productCodesOf(cell);
  return "problem" in codes ? codes : { value: { product_code: "", product_codes: codes.value } };
}

/** Whether the row offers a choice (MULTIPLE or TEMPLATE) rather than one product. */
export function isChoice(row: ProductChoiceCells): boolean {
  return row.product_codes !== undefined || row.selection_template_id !== undefined;
}

/**
 * A choice's face value must be a whole number (OpenAPI NewOrderItemDetails, `face_value`);
 * its minimum is checked against the products at preflight.
 */
export function choiceFaceValueProblem(faceValue: string): string | undefined {
  if (!canonicalDecimal(faceValue).includes(".")) return undefined;
  return `face_value must be a whole number for a choice of products (got ${faceValue})`;
}

/** The `currency` cell, upper-cased, when the row has one. */
export function currencyCellOf(
  cell: string | undefined,
): { value: string | undefined } | { problem: Problem } {
  const currency = cell?.trim();
  if (!currency) return { value: undefined };
  if (CURRENCY.test(currency)) return { value: currency.toUpperCase() };
  const message = `currency must be a 3-letter code like USD (got ${quoted(currency)})`;
  return { problem: { column: "currency", message } };
}

/**
 * A template row's payment currency: the snapshot does not know a template's products, so the
 * row's currency cell, else `--currency`, must say it.
 */
export function templateCurrencyOf(
  own: string | undefined,
  fallback: string | undefined,
): { value: Pick<OrderRow, "currency" | "currency_source"> } | { problem: Problem } {
  if (own !== undefined) return { value: { currency: own, currency_source: "row" } };
  if (fallback) return { value: { currency: fallback.toUpperCase(), currency_source: "default" } };
  const message =
    "currency is required on a selection_template_id row: the catalog snapshot does not know " +
    "a template's products; add a currency column or pass --currency";
  return { problem: { column: "currency", message } };
}

/**
 * The service pays a recipient in payment products only (OpenAPI RecipientDistribution): a
 * template's products cannot be checked here, so a recipient row names its products.
 */
export function recipientTemplateProblem(
  distribution: Distribution,
  choice: ProductChoiceCells,
): string | undefined {
  if (distribution !== "recipient" || choice.selection_template_id === undefined) return undefined;
  return (
    "a recipient row needs its products named (product_code or product_codes): the service " +
    "pays recipients in payment products only, and a template's products cannot be checked here"
  );
}

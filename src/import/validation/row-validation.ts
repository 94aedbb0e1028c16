import { isPlainDecimal, sendsExactly } from "../../money.js";
import { LIMITS } from "../../orders/limits.js";
import type { Distribution, OrderRow } from "../../orders/order-row.js";
import { INVISIBLE, quoted } from "../../orders/quoted.js";
import { parseSendAt } from "../../orders/send-at.js";
import { METADATA_PREFIX } from "../header/header.js";
import {
  choiceFaceValueProblem,
  currencyCellOf,
  distributionOf,
  isChoice,
  linkEmailProblem,
  type Problem,
  type ProductChoiceCells,
  productChoiceOf,
  recipientReferenceOf,
  recipientTemplateProblem,
  templateCurrencyOf,
} from "./choice-validation.js";
import type { ReferenceTracker } from "./reference-tracker.js";
import type { RowError } from "./row-error.js";

/**
 * Pragmatic, not RFC 5322: one @, no spaces, a dotted domain with no empty label. It catches
 * the mistakes spreadsheets make (two addresses in a cell, a missing domain, a stray space).
 */
const EMAIL = /^[^\s@]+@(?:[^\s@.]+\.)+[^\s@.]+$/;

/**
 * The service's own rule (its OpenAPI `format: email`, as ajv-formats checks it): ASCII local
 * part and domain labels. An address it refuses would only become a failed_final row later.
 */
const SERVICE_EMAIL =
  /^[a-z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

export interface ValidateRowOptions {
  /** Template for rows without template_id: --template-id, else the configuration's. */
  defaultTemplateId?: string;
  /** Checks that a reference is used once in the file; one tracker per file. */
  references?: ReferenceTracker;
  /**
   * true: face_value is written with ',' as its decimal mark (`25,50`), read as `25.50`; a value
   * with a '.' is then refused (in such files '.' separates thousands: `1.000,00` is not guessed
   * at). "either": a ',' or a '.' value is read, never both in one value (an assumption, for a
   * ';'-separated file). Unset: '.' only.
   */
  decimalComma?: boolean | "either";
  /** Told the first time a face_value was read with a decimal comma. */
  onDecimalComma?: () => void;
  /** The time `send_at` is checked against (ms). @defaultValue Date.now() */
  now?: number;
  /** Distribution of rows without a distribution cell (`--distribution`). @defaultValue "email" */
  defaultDistribution?: Distribution;
  /** `--currency`: the payment currency of template rows without a currency cell. */
  defaultCurrency?: string;
}

/**
 * A refused row carries `partial` when its product cells could be read: the row as far as it
 * was, its face_value "" when that was refused, so the catalog can still name the rest of its
 * problems (docs/order-files.md, "Every problem of a row").
 */
export type RowValidation =
  | { ok: true; row: OrderRow }
  | { ok: false; errors: RowError[]; partial?: OrderRow };

/** Length in characters as a person counts them (code points, not UTF-16 units). */
function chars(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/**
 * Printable ASCII alone (space to `~`): no invisible, control or non-ASCII character, and one
 * UTF-16 unit a character. Nearly every address is; one test settles what would otherwise take
 * two walks over its characters, a row of a big file at a time.
 */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

function checkEmail(email: string): string | undefined {
  if (email === "") return "email is required";
  const plain = PRINTABLE_ASCII.test(email);
  if ((plain ? email.length : chars(email)) > LIMITS.emailChars)
    return `email is longer than ${LIMITS.emailChars} characters`;
  return plain ? emailShape(email) : (unusualCharacter(email) ?? emailShape(email));
}

/** What is wrong with an address that is not printable ASCII: the first character at fault. */
function unusualCharacter(email: string): string | undefined {
  const invisible = [...email].find((c) => INVISIBLE.test(c));
  if (invisible !== undefined)
    return `${quoted(email)} holds an invisible or control character (U+${invisible.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}): retype the address`;
  const foreign = [...email].find((c) => c.codePointAt(0)! > 0x7e);
  if (foreign !== undefined)
    return `${quoted(email)} holds ${JSON.stringify(foreign)}: the service takes e-mail addresses in ASCII only (no accents, no international domain names; use the domain's xn-- form)`;
  return undefined;
}

function emailShape(email: string): string | undefined {
  if (!EMAIL.test(email) || !SERVICE_EMAIL.test(email))
    return `${quoted(email)} is not a valid e-mail address`;
  return undefined;
}

/** A plain decimal written with a comma: digits, one ',', digits. */
const COMMA_DECIMAL = /^\d+,\d+$/;

/**
 * face_value as the service takes it: with decimalComma, `25,50` becomes `25.50` and a '.' is
 * refused; without, a comma value is refused with the option that reads it.
 */
function faceValueOf(
  value: string,
  options: ValidateRowOptions,
): { value: string } | { error: string } {
  if (options.decimalComma) {
    if (options.decimalComma === true && value.includes("."))
      return {
        error: `face_value must use ',' as its decimal mark (--decimal-comma), with no '.' or other separators (got ${quoted(value)})`,
      };
    if (!COMMA_DECIMAL.test(value)) return { value };
    options.onDecimalComma?.();
    return { value: value.replace(",", ".") };
  }
  if (COMMA_DECIMAL.test(value))
    return {
      error: `face_value ${quoted(value)} has ',' as its decimal mark: pass --decimal-comma to read it as ${value.replace(",", ".")}`,
    };
  return { value };
}

function checkFaceValue(value: string): string | undefined {
  if (value === "") return "face_value is required";
  if (!isPlainDecimal(value)) {
    return `face_value must be a plain decimal like 25 or 10.50, without sign, currency symbol, separators or exponent (got ${quoted(value)})`;
  }
  if (/^[0.]+$/.test(value)) return `face_value must be more than zero (got ${value})`;
  // Told here, with its line, rather than when its order is made in pass 2.
  if (!sendsExactly(value))
    return `face_value ${value} has more digits than the service's JSON number keeps: it would be sent rounded`;
  return undefined;
}

function metadataOf(fields: Record<string, string>, line: number, errors: RowError[]) {
  const metadata: Record<string, string> = {};
  // No pair array a cell: a big import validates a million rows.
  for (const field in fields) {
    if (!field.startsWith(METADATA_PREFIX)) continue;
    const value = fields[field]!;
    if (value === "") continue;
    const key = field.slice(METADATA_PREFIX.length);
    if (chars(key) > LIMITS.metadataKeyChars) {
      errors.push({
        line,
        column: field,
        message: `metadata key ${quoted(key)} is longer than ${LIMITS.metadataKeyChars} characters`,
      });
    }
    if (chars(value) > LIMITS.metadataValueChars) {
      errors.push({
        line,
        column: field,
        message: `metadata value is ${chars(value)} characters, at most ${LIMITS.metadataValueChars} allowed`,
      });
    }
    metadata[key] = value;
  }
  const count = Object.keys(metadata).length;
  if (count > LIMITS.metadataKeys) {
    errors.push({
      line,
      column: "metadata",
      message: `row has ${count} non-empty metadata cells, at most ${LIMITS.metadataKeys} allowed`,
    });
  }
  return metadata;
}

function checkReference(
  reference: string,
  line: number,
  references: ReferenceTracker | undefined,
): string | undefined {
  if (chars(reference) > LIMITS.referenceChars) {
    return `reference is longer than ${LIMITS.referenceChars} characters`;
  }
  const earlier = references?.claim(reference, line);
  if (earlier !== undefined)
    return `reference ${quoted(reference)} is already used on line ${earlier}`;
  return undefined;
}

function templateOf(fields: Record<string, string>, fallback: string | undefined) {
  const own = fields.template_id?.trim();
  if (own) return { template_id: own, template_source: "row" as const };
  if (fallback) return { template_id: fallback, template_source: "default" as const };
  return { template_source: "none" as const };
}

/**
 * Validates one CSV row (cells keyed by field) into an OrderRow, or lists every problem of the
 * row at once so the user fixes a row in one go. Catalog checks come later, at preflight.
 */
export function validateRow(
  { line, fields }: { line: number; fields: Record<string, string> },
  options: ValidateRowOptions = {},
): RowValidation {
  const errors: RowError[] = [];
  const fail = (column: string, message: string | undefined) => {
    if (message !== undefined) errors.push({ line, column, message });
  };
  const email = fields.email ?? "";
  const read = faceValueOf(fields.face_value ?? "", options);
  const faceValue = "value" in read ? read.value : "";
  const sendingErrors: RowError[] = [];
  const sending = sendingOf(fields, options, sendingErrors, line);
  if (sending.distribution === "link") fail("email", linkEmailProblem("link", email));
  else fail("email", checkEmail(email));
  for (const error of sendingErrors) errors.push(error);
  const faceProblem = "error" in read ? read.error : checkFaceValue(faceValue);
  fail("face_value", faceProblem);
  // Whole for a choice: asked only of a face value that is a plain decimal to begin with.
  if (faceProblem === undefined && sending.choice && isChoice(sending.choice))
    fail("face_value", choiceFaceValueProblem(faceValue));
  const description = fields.description || undefined;
  if (description !== undefined && chars(description) > LIMITS.descriptionChars) {
    fail(
      "description",
      `description is ${chars(description)} characters, at most ${LIMITS.descriptionChars} allowed`,
    );
  }
  // Trimmed although other cells are not: a re-export that drops a stray space must still name
  // the same card, or a re-import would pay it twice.
  const reference = fields.reference?.trim() || undefined;
  if (reference !== undefined)
    fail("reference", checkReference(reference, line, options.references));
  const sendAt = fields.send_at?.trim()
    ? parseSendAt(fields.send_at, options.now ?? Date.now())
    : undefined;
  if (sendAt && "error" in sendAt) fail("send_at", sendAt.error);
  const metadata = metadataOf(fields, line, errors);
  if (!sending.choice) return { ok: false, errors };
  const row: OrderRow = {
    line,
    email,
    product_code: sending.choice.product_code,
    face_value: errors.some((e) => e.column === "face_value") ? "" : faceValue,
    ...templateOf(fields, options.defaultTemplateId),
    metadata,
  };
  if (description !== undefined) row.description = description;
  if (reference !== undefined) row.reference = reference;
  if (sendAt && "at" in sendAt) row.send_at = sendAt.at;
  const whole = withSending(row, sending);
  return errors.length > 0 ? { ok: false, errors, partial: whole } : { ok: true, row: whole };
}

/** How a row is sent and what on, as its cells and the import's defaults say. */
interface Sending {
  distribution: Distribution;
  recipientReference?: string;
  /** Undefined when the product cells are wrong (the problem is listed). */
  choice?: ProductChoiceCells;
  currency?: Pick<OrderRow, "currency" | "currency_source">;
}

/**
 * Reads distribution, recipient_reference, the product cells and currency
 * (docs/order-files.md, "Distribution and product choice"); problems go to `errors`.
 */
function sendingOf(
  fields: Record<string, string>,
  options: ValidateRowOptions,
  errors: RowError[],
  line: number,
): Sending {
  const note = (problem: Problem) => errors.push({ line, ...problem });
  const read = distributionOf(fields.distribution, options.defaultDistribution);
  if ("problem" in read) note(read.problem);
  // A wrong distribution cell is listed; the rest is checked as for an e-mail row.
  const distribution = "value" in read ? read.value : "email";
  const sending: Sending = { distribution };
  const reference = recipientReferenceOf(fields.recipient_reference, distribution);
  if ("problem" in reference) note(reference.problem);
  else sending.recipientReference = reference.value;
  const choice = productChoiceOf(fields);
  if ("problem" in choice) note(choice.problem);
  else sending.choice = choice.value;
  const cell = currencyCellOf(fields.currency);
  if ("problem" in cell) note(cell.problem);
  else if (sending.choice?.selection_template_id !== undefined) {
    const currency = templateCurrencyOf(cell.value, options.defaultCurrency);
    if ("problem" in currency) note(currency.problem);
    else sending.currency = currency.value;
  } else if (cell.value !== undefined)
    sending.currency = { currency: cell.value, currency_source: "row" };
  const mixed = sending.choice && recipientTemplateProblem(distribution, sending.choice);
  if (mixed) note({ column: "distribution", message: mixed });
  return sending;
}

/** The row with what sendingOf read, each field only when it is not the e-mail default. */
function withSending(row: OrderRow, sending: Sending): OrderRow {
  if (sending.distribution !== "email") row.distribution = sending.distribution;
  if (sending.recipientReference !== undefined)
    row.recipient_reference = sending.recipientReference;
  const choice = sending.choice;
  if (!choice) return row;
  if (choice.product_codes !== undefined) row.product_codes = choice.product_codes;
  if (choice.selection_template_id !== undefined)
    row.selection_template_id = choice.selection_template_id;
  if (sending.currency) Object.assign(row, sending.currency);
  return row;
}

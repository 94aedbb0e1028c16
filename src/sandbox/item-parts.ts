/**
 * The two parts of an order item that come in several kinds (OpenAPI NewOrderItemDetails):
 * its `distribution_method` (EmailDistribution, LinkDistribution, RecipientDistribution) and its
 * `products` (SingleProduct, MultipleProduct, PayoutSelectionTemplate): their schema checks,
 * and what a checked part is read as.
 */

/** A distribution_method that passed the checks. */
export type NewDistribution =
  | { type: "EMAIL"; email_address: string; template_id: string | undefined }
  | { type: "PAYOUT_LINK"; template_id: string | undefined }
  | {
      type: "RECIPIENT";
      recipient_reference: string;
      email_address: string;
      template_id: string | undefined;
    };

/** A products part that passed the checks. */
export type NewProducts =
  | { type: "SINGLE"; value: string }
  | { type: "MULTIPLE"; values: string[] }
  | { type: "TEMPLATE"; template_id: string };

/** Where a problem goes: Problems of validate-order.ts (locations under `body`). */
export interface ProblemSink {
  add(location: (string | number)[], type: string, message: string): void;
}

type Obj = Record<string, unknown>;

/** The e-mail pattern of ajv-formats, so that what passes here also passes the OpenAPI schema. */
const EMAIL =
  /^[a-z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** OpenAPI RecipientDistribution, `recipient_reference`. */
const RECIPIENT_REFERENCE = /^[A-Za-z0-9\-_@.]+$/;
const RECIPIENT_REFERENCE_MAX = 255;

const DISTRIBUTION_TYPES = ["EMAIL", "PAYOUT_LINK", "RECIPIENT"];
const PRODUCT_TYPES = ["SINGLE", "MULTIPLE", "TEMPLATE"];

function checkEmail(dm: Obj, at: (string | number)[], problems: ProblemSink): void {
  if (dm.email_address === undefined) {
    problems.add([...at, "email_address"], "missing", "Field required");
  } else if (typeof dm.email_address !== "string" || !EMAIL.test(dm.email_address)) {
    problems.add([...at, "email_address"], "value_error", "Invalid e-mail");
  }
}

function checkRecipientReference(dm: Obj, at: (string | number)[], problems: ProblemSink): void {
  const reference = dm.recipient_reference;
  const where = [...at, "recipient_reference"];
  if (reference === undefined) problems.add(where, "missing", "Field required");
  else if (typeof reference !== "string") problems.add(where, "string_type", "Must be a string");
  else if (reference.length > RECIPIENT_REFERENCE_MAX)
    problems.add(where, "string_too_long", `At most ${RECIPIENT_REFERENCE_MAX} characters`);
  else if (!RECIPIENT_REFERENCE.test(reference))
    problems.add(where, "string_pattern_mismatch", "Letters, digits, - _ @ . only");
}

/** Checks a distribution_method (`at`: its location, e.g. ["items", 0, "distribution_method"]). */
export function checkDistribution(dm: Obj, at: (string | number)[], problems: ProblemSink): void {
  if (!DISTRIBUTION_TYPES.includes(dm.type as string)) {
    const allowed = DISTRIBUTION_TYPES.map((t) => `'${t}'`).join(", ");
    problems.add([...at, "type"], "enum", `Must be one of ${allowed}`);
  }
  if (dm.type === "EMAIL" || dm.type === "RECIPIENT") checkEmail(dm, at, problems);
  if (dm.type === "RECIPIENT") checkRecipientReference(dm, at, problems);
  if (dm.template_id !== undefined && dm.template_id !== null) {
    if (typeof dm.template_id !== "string" || dm.template_id === "") {
      problems.add([...at, "template_id"], "string_type", "Must be a string");
    }
  }
}

function checkValues(values: unknown, at: (string | number)[], problems: ProblemSink): void {
  const where = [...at, "values"];
  if (!Array.isArray(values)) {
    problems.add(where, values === undefined ? "missing" : "list_type", "Must be an array");
    return;
  }
  if (values.length < 2) problems.add(where, "too_short", "At least 2 product codes");
  if (values.some((v) => typeof v !== "string" || v === ""))
    problems.add(where, "string_type", "Each must be a non-empty string");
  if (new Set(values).size !== values.length)
    problems.add(where, "unique_items", "Product codes must be unique");
}

/**
 * Checks a products part. A choice (MULTIPLE, TEMPLATE) takes a whole face value (OpenAPI
 * NewOrderItemDetails, `face_value`); its minimum is the order book's to check.
 */
export function checkProducts(
  products: Obj,
  face: unknown,
  at: (string | number)[],
  problems: ProblemSink,
): void {
  if (!PRODUCT_TYPES.includes(products.type as string)) {
    const allowed = PRODUCT_TYPES.map((t) => `'${t}'`).join(", ");
    problems.add([...at, "type"], "enum", `Must be one of ${allowed}`);
    return;
  }
  if (products.type === "SINGLE") {
    if (typeof products.value !== "string" || products.value === "") {
      problems.add([...at, "value"], "string_type", "Must be a non-empty string");
    }
    return;
  }
  if (products.type === "MULTIPLE") checkValues(products.values, at, problems);
  if (products.type === "TEMPLATE") {
    if (typeof products.template_id !== "string" || products.template_id === "")
      problems.add([...at, "template_id"], "string_type", "Must be a non-empty string");
  }
  if (typeof face === "number" && !Number.isInteger(face)) {
    const where = [...at.slice(0, -1), "face_value"];
    problems.add(where, "value_error", "Must be a whole number for MULTIPLE or TEMPLATE");
  }
}

function templateOf(dm: Obj): string | undefined {
  return (dm.template_id as string | null | undefined) ?? undefined;
}

/** A checked distribution_method, read. */
export function readDistribution(dm: Obj): NewDistribution {
  const template_id = templateOf(dm);
  if (dm.type === "PAYOUT_LINK") return { type: "PAYOUT_LINK", template_id };
  const email_address = dm.email_address as string;
  if (dm.type === "RECIPIENT") {
    const recipient_reference = dm.recipient_reference as string;
    return { type: "RECIPIENT", recipient_reference, email_address, template_id };
  }
  return { type: "EMAIL", email_address, template_id };
}

/** A checked products part, read. */
export function readProducts(products: Obj): NewProducts {
  if (products.type === "MULTIPLE")
    return { type: "MULTIPLE", values: products.values as string[] };
  if (products.type === "TEMPLATE")
    return { type: "TEMPLATE", template_id: products.template_id as string };
  return { type: "SINGLE", value: products.value as string };
}

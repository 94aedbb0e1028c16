// The service's OpenAPI document as a JSON Schema validator (ajv), for the sandbox's contract
// tests: its responses (test/sandbox/contract.test.ts) and the webhooks it sends.
import { readFileSync } from "node:fs";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

// A byte-for-byte copy of the service's document (shared/reference/ beside the repository), kept
// in the repository so that a clone on its own runs every test.
const OPENAPI_URL = new URL("../fixtures/openapi-2024-02-05.json", import.meta.url);
export const DOC_ID = "https://sandbox.test/openapi.json";

export type Node = Record<string, unknown>;

/**
 * The document marks nullable fields with `nullable: true`, an OpenAPI 3.0 keyword that JSON
 * Schema 2020-12 ignores: turn it into types and enums that allow null.
 */
function allowNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(allowNulls);
  if (value === null || typeof value !== "object") return value;
  const out: Node = {};
  for (const [key, child] of Object.entries(value as Node)) {
    // Examples are data, not schemas.
    out[key] = key === "example" || key === "examples" ? child : allowNulls(child);
  }
  if (!("nullable" in out)) return out;
  const nullable = out.nullable === true;
  delete out.nullable;
  if (!nullable) return out;
  if (Array.isArray(out.enum)) out.enum = [...out.enum, null];
  if (typeof out.type === "string") {
    out.type = [out.type, "null"];
    return out;
  }
  return { anyOf: [out, { type: "null" }] };
}

function loadDocument(): Node {
  const doc = allowNulls(JSON.parse(readFileSync(OPENAPI_URL, "utf8"))) as Node;
  const schemas = (doc.components as Node).schemas as Record<string, Node>;
  // Real data has four decimals ("0.0130") where the document's pattern allows two.
  (schemas.ProductDiscountMultiplier as Node).pattern = "^[0-9]+\\.[0-9]{2,4}$";
  // The interface document says fx is nullable, and real orders carry `"fx": null`.
  const entry = (schemas.TransactionDetailEntry as Node).properties as Node;
  entry.fx = { anyOf: [entry.fx, { type: "null" }] };
  // ProductUpdateState has `properties` and `required` but no `type`, so JSON Schema would take
  // any string for a state; the document means an object (API-NOTES.md: "each state is an
  // OBJECT"), and the receiver refuses anything else.
  (schemas.ProductUpdateState as Node).type = "object";
  return { ...doc, $id: DOC_ID };
}

const DOC = loadDocument();
export const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
ajv.addFormat("decimal", /^\d+(\.\d+)?$/);
ajv.addFormat("html", true);
ajv.addSchema(DOC);

const pointerPart = (part: string) => part.replace(/~/g, "~0").replace(/\//g, "~1");

/** The validator of one documented response (path, method, status), through its $ref if any. */
export function responseSchema(path: string, method: string, status: number) {
  const paths = DOC.paths as Record<string, Record<string, Node>>;
  const responses = paths[path]?.[method]?.responses as Record<string, Node> | undefined;
  const response = responses?.[String(status)];
  if (!response) throw new Error(`no response ${status} documented for ${method} ${path}`);
  const at =
    typeof response.$ref === "string"
      ? response.$ref
      : `#/paths/${pointerPart(path)}/${method}/responses/${status}`;
  const validate = ajv.getSchema(`${DOC_ID}${at}/content/application~1json/schema`);
  if (!validate) throw new Error(`no schema for ${method} ${path} ${status}`);
  return validate;
}

/** The validator of a webhook's body as the document's `webhooks` define it. */
export function webhookSchema(name: "order.completion" | "product.update"): ValidateFunction {
  const at = `#/webhooks/${pointerPart(name)}/post/requestBody/content/application~1json/schema`;
  const validate = ajv.getSchema(`${DOC_ID}${at}`);
  if (!validate) throw new Error(`no schema for the ${name} webhook`);
  return validate;
}

/** Paths the client calls that carry no identifier. */
const FIXED = new Set(["/v2/order", "/v2/product", "/v2/balance"]);

/** Paths with one identifier at the end, and the template each folds to. */
const TEMPLATES: [RegExp, string][] = [
  [/^\/v2\/order\/[^/]+$/, "/v2/order/{id}"],
  [/^\/v2\/product\/[^/]+$/, "/v2/product/{code}"],
];

/**
 * The route label of a request path: identifiers folded (`/v2/order/{id}`), anything unknown
 * `other`. Every order id as its own label value would grow the metrics without bound.
 */
export function routeLabel(path: string): string {
  const bare = path.split("?")[0] ?? "";
  if (FIXED.has(bare)) return bare;
  for (const [pattern, template] of TEMPLATES) if (pattern.test(bare)) return template;
  return "other";
}

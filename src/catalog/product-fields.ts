/** Lenient readers of a raw product's fields: a malformed product still gets a best-effort record. */

export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

export function asString(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

export function asStringList(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === "string")
    ? (value as string[])
    : undefined;
}

/** A subscription's plans as far as they can be read. */
export function subscriptionPlans(product: Record<string, unknown>): {
  code: string;
  price: string;
  name?: string;
}[] {
  const plans = asRecord(product.subscription)?.subscription_plans;
  if (!Array.isArray(plans)) return [];
  const out: { code: string; price: string; name?: string }[] = [];
  for (const plan of plans) {
    const record = asRecord(plan);
    const code = asString(record?.subscription_plan_code);
    const price = asString(record?.price);
    if (code && price) out.push({ code, price, name: asString(record?.name) });
  }
  return out;
}

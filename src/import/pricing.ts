/**
 * Who priced what an import shows, checks against budgets and the balance, and records: the
 * service (POST /v2/order/estimate), or giftjobs itself, from the catalog snapshot's discount
 * multipliers, or at face value when there is no catalog check (the discount unknown).
 */
export type PricedBy = "service" | "snapshot" | "face_value";

/** How an import's prices were made; `note` says why not by the service. */
export interface Pricing {
  by: PricedBy;
  note?: string;
}

/** What the prices are, in words: "priced by the service", or the local estimate and why. */
export function pricingText(pricing: Pricing): string {
  if (pricing.by === "service") return "prices: the service's own (its estimate)";
  const where =
    pricing.by === "snapshot"
      ? "from the catalog snapshot"
      : "at face value (no catalog check: the discount is unknown)";
  return `prices: estimated locally ${where} (${pricing.note ?? "the service was not asked"})`;
}

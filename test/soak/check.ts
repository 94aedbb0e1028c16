// The soak test's invariants, checked at rest against the service's own orders (issue 31).
// docs/architecture/sending-orders.md, "Row statuses" and
// docs/architecture/keys-and-exactly-once.md, "Exactly once": a row is paid once, and a row the
// ledger says nothing was made for (failed_final, cancelled) has no order on the service.

/** A row as the ledger reports it (`orders report`). */
export interface ReportedRow {
  /** The campaign it is a row of (the same file may be imported twice: scenario.ts). */
  campaign: string;
  /** 1-based, the file's order: row N is sent to recipient N. */
  row: number;
  email: string;
  status: string;
  orderId: string;
  key: string;
  errorType: string;
  replayed: boolean;
}

/** An order as GET /_sandbox/orders lists it. */
export interface ServiceOrder {
  id: string;
  status: string;
  idempotency_key: string;
  /** Tells the API keys orders were made with apart (src/sandbox/README.md). */
  api_key_id?: string | null;
  created_at: string;
  items: { distribution_method: { email_address: string } }[];
  /** giftjobs' tags name the campaign that made it (src/orders/order-tags.ts). */
  metadata?: Record<string, string> | null;
}

type ViolationKind =
  | "paid-twice"
  | "paid-but-reported-nothing-made"
  | "completed-without-order"
  | "unknown-recipient"
  | "counts-off"
  | "not-at-rest"
  | "step-failed"
  | "harness";

export interface Violation {
  kind: ViolationKind;
  /** The row it is about, when it is about one. */
  row?: number;
  detail: string;
}

/**
 * Statuses that say no order was made for the row (docs/architecture/sending-orders.md, "Row
 * statuses").
 */
const NOTHING_MADE = new Set(["failed_final", "cancelled"]);

/** An async order that ended FAILED was refunded: it is not a payment. */
export function isPaid(order: ServiceOrder): boolean {
  return order.status !== "FAILED";
}

/** The paid orders of each recipient, one entry per item sent to them. */
function paidByEmail(orders: ServiceOrder[]): Map<string, ServiceOrder[]> {
  const paid = new Map<string, ServiceOrder[]>();
  for (const order of orders.filter(isPaid))
    for (const item of order.items) {
      const email = item.distribution_method.email_address;
      paid.set(email, [...(paid.get(email) ?? []), order]);
    }
  return paid;
}

function paidTwice(row: ReportedRow, paid: ServiceOrder[], forced: Set<string>): Violation[] {
  if (paid.length < 2 || forced.has(row.email)) return [];
  return [
    {
      kind: "paid-twice",
      row: row.row,
      detail: `${paid.length} paid items; no retry --new-key --include-uncertain or --allow-repeats touched this row`,
    },
  ];
}

function reportedNothingMade(row: ReportedRow, paid: ServiceOrder[]): Violation[] {
  if (paid.length === 0 || !NOTHING_MADE.has(row.status)) return [];
  return [
    {
      kind: "paid-but-reported-nothing-made",
      row: row.row,
      detail: `reported ${row.status} but the service has ${paid.length} paid order(s) for it`,
    },
  ];
}

function completedWithoutOrder(row: ReportedRow, paid: ServiceOrder[]): Violation[] {
  if (row.status !== "completed") return [];
  if (paid.some((order) => order.id === row.orderId)) return [];
  return [
    {
      kind: "completed-without-order",
      row: row.row,
      detail: `reported completed with order ${row.orderId || "(none)"}, which is not among its paid orders on the service`,
    },
  ];
}

function unknownRecipients(rows: ReportedRow[], paid: Map<string, ServiceOrder[]>): Violation[] {
  const known = new Set(rows.map((row) => row.email));
  return [...paid.keys()]
    .filter((email) => !known.has(email))
    .map((email) => ({
      kind: "unknown-recipient" as const,
      detail: `the service paid ${email}, which no row of the ledger names`,
    }));
}

/**
 * The invariants of issue 31: (1) no row has two paid orders unless `retry --new-key --include-uncertain`
 * was applied to it (`forced`, by e-mail); (2) no row with a paid order is reported failed_final
 * or cancelled; (3) a row reported completed has its order among the service's paid ones.
 */
export function checkInvariants(
  rows: ReportedRow[],
  orders: ServiceOrder[],
  forced: Set<string>,
): Violation[] {
  const paid = paidByEmail(orders);
  const violations: Violation[] = [];
  const checked = new Set<string>();
  for (const row of rows) {
    const all = paid.get(row.email) ?? [];
    // Paid twice counts every campaign's orders: a person, not a campaign, is paid once (issue
    // 35), unless an operator said otherwise (--new-key --include-uncertain, --allow-repeats).
    if (!checked.has(row.email)) violations.push(...paidTwice(row, all, forced));
    checked.add(row.email);
    const mine = all.filter((order) => (campaignOf(order) ?? row.campaign) === row.campaign);
    violations.push(...reportedNothingMade(row, mine), ...completedWithoutOrder(row, mine));
  }
  return [...violations, ...unknownRecipients(rows, paid)];
}

/** The campaign an order's tags name, if it has them. */
function campaignOf(order: ServiceOrder): string | undefined {
  return order.metadata?.giftjobs_campaign;
}

/**
 * (4) The campaign's counts, which only the ledger's scripts change, agree with its rows'
 * statuses (docs/architecture/sending-orders.md, "Row statuses": "so they stay exact").
 */
export function checkCounts(
  rows: ReportedRow[],
  counts: Record<string, number>,
  statuses: readonly string[],
): Violation[] {
  const found = new Map<string, number>();
  for (const row of rows) found.set(row.status, (found.get(row.status) ?? 0) + 1);
  const off = statuses.filter((status) => (counts[status] ?? 0) !== (found.get(status) ?? 0));
  if ((counts.total ?? 0) !== rows.length) off.push("total");
  if (off.length === 0) return [];
  const shown = (status: string) =>
    `${status} ${counts[status] ?? 0} (rows: ${status === "total" ? rows.length : (found.get(status) ?? 0)})`;
  return [{ kind: "counts-off", detail: `counts say ${off.map(shown).join(", ")}` }];
}

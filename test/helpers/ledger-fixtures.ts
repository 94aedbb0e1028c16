import type { LedgerRow } from "../../src/orders/ledger.js";

/** A one-item order body, as the ledger records it, for tests that write the ledger directly. */
export function orderRequest(email = "u@example.com", product = "P1") {
  return {
    payment_method: { type: "ACCOUNT_BALANCE" as const, currency: "USD" },
    items: [
      {
        face_value: 10,
        distribution_method: { type: "EMAIL" as const, email_address: email },
        products: { type: "SINGLE" as const, value: product },
      },
    ],
  };
}

/** A ledger row of order `key` from file line `line`. */
export function ledgerRow(
  key: string,
  line: number,
  overrides: Partial<LedgerRow> = {},
): LedgerRow {
  return {
    line,
    key,
    generation: 0,
    payload_hash: `p${line}`,
    email: `u${line}@example.com`,
    product_code: "P1",
    face_value: "10",
    currency: "USD",
    ...overrides,
  };
}

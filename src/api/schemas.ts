import * as z from "zod";
import {
  DenominationsSchema,
  decimalString,
  ProductUpdateStateSchema,
} from "./product-update-schema.js";

export { type ProductUpdateState, ProductUpdateStateSchema } from "./product-update-schema.js";

/**
 * Response schemas. Tolerant of unknown fields (looseObject) and of the nulls seen in real data;
 * strict about the fields giftjobs relies on. Products are kept exactly as received: the catalog
 * page schema checks only its envelope, and `productProblems` lists what is wrong with a product.
 */

const nullableString = z.string().nullish();

export const CatalogPageSchema = z.looseObject({
  catalog: z.array(z.looseObject({ code: z.string().min(1) })),
  pagination: z.looseObject({
    cursors: z.looseObject({ after: nullableString, before: nullableString }),
    page: z.looseObject({ limit: z.number().int() }).nullish(),
  }),
});

/** A product as received: every field kept, including unknown ones and unknown payout types. */
export type RawProduct = Record<string, unknown> & { code: string };

export interface CatalogPage {
  catalog: RawProduct[];
  pagination: {
    cursors: { after?: string | null; before?: string | null };
    page?: { limit: number } | null;
  };
}

/** The fields of a product that ordering relies on. */
export const ProductCoreSchema = z.looseObject({
  code: z.string().min(1),
  name: z.string(),
  currency: z.string().regex(/^[A-Z]{3}$/, "must be a 3-letter currency code"),
  is_orderable: z.boolean(),
  state: z.string(),
  payout_type: z.string(),
  countries_redeemable_in: z.array(z.string()),
  discount_multiplier: decimalString.nullish(),
  gift_card: z.looseObject({ denominations: DenominationsSchema }).nullish(),
  payment: z.looseObject({ denominations: DenominationsSchema }).nullish(),
  subscription: z
    .looseObject({
      subscription_plans: z.array(
        z.looseObject({
          subscription_plan_code: z.string().min(1),
          price: decimalString,
          name: z.string().nullish(),
        }),
      ),
    })
    .nullish(),
});
export type ProductCore = z.infer<typeof ProductCoreSchema>;

/** What is wrong with a product's relied-on fields, as "field: problem" lines; empty when fine. */
export function productProblems(product: unknown): string[] {
  const parsed = ProductCoreSchema.safeParse(product);
  if (parsed.success) return [];
  return parsed.error.issues.map(
    (issue) => `${issue.path.join(".") || "(product)"}: ${issue.message}`,
  );
}

export const OrderItemSchema = z.looseObject({
  id: z.string().min(1),
  face_value: z.union([z.string(), z.number()]).nullish(),
  price: z.string().nullish(),
  currency: z.string().nullish(),
  distribution_method: z
    .looseObject({ type: z.string(), email_address: z.string().nullish() })
    .nullish(),
  products: z.looseObject({ type: z.string() }).nullish(),
  payout: z
    .looseObject({
      status: z.string().nullish(),
      status_updated_at: nullableString,
      url: nullableString,
      expiry_date: nullableString,
    })
    .nullish(),
});
export type OrderItem = z.infer<typeof OrderItemSchema>;

export const OrderSchema = z.looseObject({
  id: z.string().min(1),
  status: z.string(),
  created_at: nullableString,
  completed_at: nullableString,
  description: nullableString,
  currency: nullableString,
  total_price: nullableString,
  total_discount: nullableString,
  payment_method: z.looseObject({ type: z.string(), currency: z.string().nullish() }).nullish(),
  items: z.array(OrderItemSchema),
  transaction_detail: z.record(z.string(), z.unknown()).nullish(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
});
export type Order = z.infer<typeof OrderSchema>;

/**
 * A completed order as the `order.completion` webhook carries it (OpenAPI CompletedOrderWebhook:
 * CompletedOrderWithBasicDetails, which has no items); an order GET /v2/order/{id} answers, with
 * its items, reads as one too.
 */
export const CompletedOrderSchema = OrderSchema.extend({
  items: z.array(OrderItemSchema).optional(),
});
export type CompletedOrder = z.infer<typeof CompletedOrderSchema>;

/** The `product.update` webhook's body (OpenAPI ProductUpdateWebhook). */
export const ProductUpdateSchema = z.looseObject({
  product_code: z.string().min(1),
  old_state: ProductUpdateStateSchema,
  new_state: ProductUpdateStateSchema,
  timestamp: z
    .string()
    .refine((text) => Number.isFinite(Date.parse(text)), "must be an ISO 8601 date-time"),
});
export type ProductUpdate = z.infer<typeof ProductUpdateSchema>;

/** 202 answer to an async order, and GET /v2/order/{id} while it still runs. */
export const AcceptedOrderSchema = z.looseObject({
  id: z.string().min(1),
  status: z.string(),
  message: nullableString,
});
export type AcceptedOrder = z.infer<typeof AcceptedOrderSchema>;

export const BalanceSchema = z.looseObject({ balance: decimalString, currency: z.string() });
export type Balance = z.infer<typeof BalanceSchema>;

/** GET /v2/balance without a currency: a list (accept a bare array or a wrapped one). */
export const BalanceListSchema = z.union([
  z.array(BalanceSchema),
  z.looseObject({ balances: z.array(BalanceSchema) }).transform((v) => v.balances),
]);

/**
 * An amount of POST /v2/order/estimate, read as a decimal string. The OpenAPI document types
 * its prices as JSON numbers, the service's guides say money is a decimal string everywhere:
 * both are read. A number is taken in the shortest form JSON wrote it ("9.87"), never summed;
 * one that prints with an exponent is refused.
 */
const estimateAmount = z.union([
  decimalString,
  z
    .number()
    .refine((n) => /^\d+(\.\d+)?$/.test(String(n)), "must be a plain decimal")
    .transform((n) => String(n)),
]);

/** One priced item of an estimate (OpenAPI OrderItemDiscount). */
export const EstimatedItemSchema = z.looseObject({
  products: z.looseObject({
    type: z.string(),
    value: z.string().nullish(),
    values: z.array(z.string()).nullish(),
  }),
  face_value: estimateAmount,
  price: estimateAmount,
  discount_multiplier: decimalString.nullish(),
  currency: z.string().nullish(),
});
export type EstimatedItem = z.infer<typeof EstimatedItemSchema>;

/** The answer of POST /v2/order/estimate (OpenAPI OrderPriceResponse). */
export const OrderEstimateSchema = z.looseObject({
  payment_method: z.looseObject({ type: z.string(), currency: z.string().nullish() }).nullish(),
  items: z.array(EstimatedItemSchema),
  currency: z.string(),
  total_discount: estimateAmount,
  total_price: estimateAmount,
});
export type OrderEstimate = z.infer<typeof OrderEstimateSchema>;

import * as z from "zod";

// The schemas a product.update's state needs, apart from the rest of schemas.ts: the product
// overrides read them in every command that opens the ledger (`orders status`, `orders list`),
// which need none of the others (docs/architecture/command-line.md, "Start-up").

export const decimalString = z.string().regex(/^\d+(\.\d+)?$/, "must be a decimal string");

export const DenominationsSchema = z.looseObject({
  type: z.string().nullish(),
  available_list: z.array(decimalString).nullish(),
  minimum_value: decimalString.nullish(),
  maximum_value: decimalString.nullish(),
});

/**
 * A product's state in a `product.update` webhook (OpenAPI ProductUpdateState): its discount
 * multiplier (the product's `discount_multiplier`), whether it can be ordered, and its
 * denominations when the message carries them.
 */
export const ProductUpdateStateSchema = z.looseObject({
  price_multiplier: decimalString,
  is_orderable: z.boolean(),
  denominations: DenominationsSchema.nullish(),
});
export type ProductUpdateState = z.infer<typeof ProductUpdateStateSchema>;

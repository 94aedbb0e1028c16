/**
 * Headers as people write them, and the field each stands for. This is the one table of them
 * (docs/order-files.md, "CSV format", lists it too). A header is matched by its letters and
 * digits only, lower-cased: "E-mail", "e_mail" and " EMAIL " are all `email`. `--map` wins over
 * the table.
 */
export const HEADER_SYNONYMS: Readonly<Record<string, readonly string[]>> = {
  email: ["Email Address", "E-mail", "Email", "Recipient Email", "Recipient E-mail"],
  face_value: ["Amount", "Value", "Face Value", "Denomination", "Betrag"],
  product_code: ["Product", "Product Code", "SKU", "Product ID"],
  reference: ["Reference", "External ID", "Employee ID", "Ref"],
  template_id: ["Template", "Template ID"],
  description: ["Description", "Note", "Message"],
  send_at: ["Send At", "Send Date", "Delivery Date", "Scheduled At", "Send On"],
  distribution: ["Distribution", "Distribution Method", "Delivery Method"],
  recipient_reference: ["Recipient Reference", "Recipient Ref", "Recipient ID"],
  product_codes: ["Product Codes", "Products", "Product Choice"],
  selection_template_id: ["Selection Template", "Selection Template ID", "Payout Template"],
  currency: ["Currency", "Currency Code"],
};

/** A header reduced to what the table compares: letters and digits, lower case. */
export function headerKey(name: string): string {
  return name.toLowerCase().replace(/[^\p{L}\p{N}]/gu, "");
}

const BY_KEY: ReadonlyMap<string, string> = (() => {
  const map = new Map<string, string>();
  for (const [field, names] of Object.entries(HEADER_SYNONYMS)) {
    // The field's own name matches loosely too: "Product-Code", "FACE VALUE".
    for (const name of [field, ...names]) {
      const key = headerKey(name);
      const earlier = map.get(key);
      if (earlier !== undefined && earlier !== field)
        throw new Error(`header synonym ${name} names both ${earlier} and ${field}`);
      map.set(key, field);
    }
  }
  return map;
})();

/** The field a header stands for by the table, if any. */
export function synonymField(name: string): string | undefined {
  return BY_KEY.get(headerKey(name));
}

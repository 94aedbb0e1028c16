/** The service's limits on an order (API-NOTES, POST /v2/order). */
export const LIMITS = {
  descriptionChars: 128,
  metadataKeys: 20,
  metadataKeyChars: 40,
  metadataValueChars: 200,
  /** Not a service limit: references are kept per row in the ledger, so they stay short. */
  referenceChars: 255,
  emailChars: 254,
} as const;

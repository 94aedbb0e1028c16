import type { AuditDraft, AuditEntry, AuditFilter } from "./entry.js";
import type { VerifiedListing, VerifyResult } from "./verify.js";

/**
 * The audit trail: append-only, one chain (docs/architecture/audit.md). In PostgreSQL when
 * GIFTJOBS_DATABASE_URL is set (pg-trail.ts), else a file under the data dir (file-trail.ts).
 */
export interface AuditTrail {
  /** Where it is kept, for messages: the file's path or `PostgreSQL table audit_entries`. */
  readonly place: string;
  /** Numbers, chains and stores the entry, durably, before it returns. */
  append(draft: AuditDraft): Promise<AuditEntry>;
  /** The entries the filter picks, oldest first. */
  list(filter?: AuditFilter): Promise<AuditEntry[]>;
  /**
   * The entries the filter picks, the whole chain checked in the same read (docs/architecture/
   * audit.md, "Reading is verifying"): a listing never shows a trail broken without saying so.
   */
  read(filter?: AuditFilter): Promise<VerifiedListing>;
  /** Checks the whole chain. */
  verify(): Promise<VerifyResult>;
  close(): Promise<void>;
}

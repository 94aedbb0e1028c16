import type { Database } from "../db/open-database.js";
import { FileAuditTrail } from "./file-trail.js";
import { PgAuditTrail } from "./pg-trail.js";
import type { AuditTrail } from "./trail.js";

/** The trail of a process that has its database open already (a worker), or the data dir's file. */
export function trailOf(where: { database?: Database; dataDir: string }): AuditTrail {
  return where.database ? new PgAuditTrail(where.database) : new FileAuditTrail(where.dataDir);
}

import { join } from "node:path";
import { UserError } from "../errors/user-error.js";

/** Where the catalog is kept, as far as a message needs to know. */
export interface CatalogPlaceSettings {
  dataDir: string;
  databaseUrl?: string | undefined;
  databaseSchema?: string | undefined;
}

/**
 * Where a missing catalog snapshot was looked for, in words: the PostgreSQL schema when
 * GIFTJOBS_DATABASE_URL is set (the data dir then holds none), else the data dir's catalog folder.
 */
export function catalogPlace(settings: CatalogPlaceSettings): string {
  return settings.databaseUrl
    ? `PostgreSQL schema ${settings.databaseSchema} (GIFTJOBS_DATABASE_URL)`
    : join(settings.dataDir, "catalog");
}

/**
 * What fills an empty catalog: a sync; in a database, also `catalog import-files`, which moves
 * the snapshots a data dir kept before the database was configured (docs/catalog-database.md,
 * "Moving file snapshots in").
 */
export function fillCatalogHint(inDatabase: boolean): string {
  return inDatabase
    ? "run `giftjobs catalog sync` first (or `giftjobs catalog import-files` to move a data dir's snapshots in)"
    : "run `giftjobs catalog sync` first";
}

/** Nothing to show or diff: no sync has published a snapshot in this data directory or schema. */
export class NoSnapshotError extends UserError {
  override readonly name = "NoSnapshotError";
  constructor(
    readonly catalogDir: string,
    inDatabase = false,
  ) {
    super(`no catalog snapshot in ${catalogDir}; ${fillCatalogHint(inDatabase)}`);
  }
}

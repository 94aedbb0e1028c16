import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type pg from "pg";
import { RunError } from "../errors/run-error.js";
import { UserError } from "../errors/user-error.js";
import { packageRoot } from "../package-root.js";
import { withSessionLock } from "./advisory-lock.js";
import { databaseFailure } from "./database-error.js";
import {
  type Database,
  type DatabaseSettings,
  type OpenDatabaseOptions,
  openDatabase,
  quoteSchema,
} from "./open-database.js";

/**
 * The schema's versions: plain SQL files `src/db/migrations/NNNN_name.sql`, applied in order by
 * `giftjobs db migrate`, each in a transaction, recorded in `schema_migrations`
 * (docs/catalog-database.md, "Migrations"). They are read from the source tree whether
 * giftjobs runs from src/ (tsx) or dist/src/ (tsc copies no .sql file), as the .lua files are.
 */
export interface Migration {
  version: number;
  name: string;
  file: string;
  /** sha256 of the file, recorded when applied: a file changed after is told by `db status`. */
  checksum: string;
}

/** A migration the schema records. */
interface AppliedMigration {
  version: number;
  name: string;
  checksum: string;
  appliedAt: Date;
}

const MIGRATIONS_DIR = join("src", "db", "migrations");

const FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/**
 * The migrations this giftjobs knows, in version order.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function knownMigrations(dir = join(packageRoot(), MIGRATIONS_DIR)): Migration[] {
  const migrations: Migration[] = [];
  for (const entry of readdirSync(dir).sort()) {
    const match = FILE_NAME.exec(entry);
    if (!match) continue;
    const file = join(dir, entry);
    const checksum = createHash("sha256").update(readFileSync(file)).digest("hex");
    migrations.push({ version: Number(match[1]), name: match[2]!, file, checksum });
  }
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new Error(
        `${dir}: migration ${migration.version} out of sequence (expected ${index + 1})`,
      );
    }
  });
  return migrations;
}

const recordTable = (
  schema: string,
) => `CREATE TABLE IF NOT EXISTS ${quoteSchema(schema)}.schema_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  checksum text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`;

/** The migrations `schema` records; none (a fresh schema, or not one of giftjobs'): []. */
async function appliedMigrations(
  client: pg.ClientBase | pg.Pool,
  schema: string,
): Promise<AppliedMigration[]> {
  const { rows: tables } = await client.query(
    "SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'schema_migrations'",
    [schema],
  );
  if (tables.length === 0) return [];
  const { rows } = await client.query<{
    version: number;
    name: string;
    checksum: string;
    applied_at: Date;
  }>(
    `SELECT version, name, checksum, applied_at FROM ${quoteSchema(schema)}.schema_migrations ORDER BY version`,
  );
  return rows.map((r) => ({
    version: r.version,
    name: r.name,
    checksum: r.checksum,
    appliedAt: r.applied_at,
  }));
}

export interface MigrateResult {
  /** The migrations this run applied (none when the schema was current). */
  applied: Migration[];
  version: number;
}

/**
 * Brings `database.schema` up to the newest migration: creates the schema when missing, then
 * applies each pending file in its own transaction with its record. Under an advisory lock, so
 * two migrators (two machines starting at once) never race: the second waits, then finds
 * nothing left to do. A schema newer than this giftjobs is refused, untouched.
 */
export async function migrate(
  database: Database,
  migrations = knownMigrations(),
): Promise<MigrateResult> {
  const client = await database.pool.connect().catch((error) => {
    throw databaseFailure(error, database.url);
  });
  client.on("error", () => {});
  try {
    return await withSessionLock(
      client,
      database.schema,
      "migrate",
      { wait: true, heldMessage: "" },
      () => applyPending(client, database.schema, migrations),
    );
  } catch (error) {
    throw databaseFailure(error, database.url);
  } finally {
    client.release();
  }
}

async function applyPending(
  client: pg.PoolClient,
  schema: string,
  migrations: Migration[],
): Promise<MigrateResult> {
  await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteSchema(schema)}`);
  await client.query(recordTable(schema));
  const applied = await appliedMigrations(client, schema);
  const newest = applied.at(-1)?.version ?? 0;
  const known = migrations.at(-1)?.version ?? 0;
  if (newest > known) throw newerSchema(schema, newest, known);
  const pending = migrations.filter((m) => m.version > newest);
  for (const migration of pending) {
    await client.query("BEGIN");
    try {
      await client.query(readFileSync(migration.file, "utf8"));
      await client.query(
        `INSERT INTO ${quoteSchema(schema)}.schema_migrations (version, name, checksum) VALUES ($1, $2, $3)`,
        [migration.version, migration.name, migration.checksum],
      );
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      const problem = (error as Error).message;
      throw new RunError(
        `migration ${migrationName(migration)} failed, nothing of it applied: ${problem}`,
        { cause: error },
      );
    }
  }
  return { applied: pending, version: pending.at(-1)?.version ?? newest };
}

function newerSchema(schema: string, found: number, known: number): UserError {
  return new UserError(
    `the database schema ${schema} is at version ${found}, newer than this giftjobs knows (${known}): upgrade giftjobs`,
  );
}

/** Where a schema stands against the code. */
export interface SchemaStatus {
  schema: string;
  /** The newest version applied; 0 when none. */
  version: number;
  /** The newest version this giftjobs knows. */
  known: number;
  applied: AppliedMigration[];
  pending: Migration[];
  /** Applied migrations whose file has changed since (or is gone). */
  changed: AppliedMigration[];
}

export async function schemaStatus(
  database: Database,
  migrations = knownMigrations(),
): Promise<SchemaStatus> {
  let applied: AppliedMigration[];
  try {
    applied = await appliedMigrations(database.pool, database.schema);
  } catch (error) {
    throw databaseFailure(error, database.url);
  }
  const version = applied.at(-1)?.version ?? 0;
  const byVersion = new Map(migrations.map((m) => [m.version, m]));
  return {
    schema: database.schema,
    version,
    known: migrations.at(-1)?.version ?? 0,
    applied,
    pending: migrations.filter((m) => m.version > version),
    changed: applied.filter((a) => byVersion.get(a.version)?.checksum !== a.checksum),
  };
}

/**
 * The check at start of every command that uses the database: refuses, in one line, a schema
 * older than the code (`giftjobs db migrate` brings it up) or newer (another, newer giftjobs
 * migrated it), exit 2.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export async function requireCurrentSchema(
  database: Database,
  migrations = knownMigrations(),
): Promise<void> {
  const status = await schemaStatus(database, migrations);
  if (status.version > status.known) {
    throw newerSchema(database.schema, status.version, status.known);
  }
  if (status.version < status.known) {
    const found =
      status.version === 0 ? "has no giftjobs tables" : `is at version ${status.version}`;
    throw new UserError(
      `the database schema ${database.schema} ${found}, this giftjobs needs version ${status.known}: run giftjobs db migrate`,
    );
  }
}

/**
 * Opens the configured database for a command that uses it: it must answer and its schema be
 * the one this giftjobs knows (requireCurrentSchema), else one line and nothing is done.
 */
export async function openCurrentDatabase(
  settings: DatabaseSettings,
  options?: OpenDatabaseOptions,
): Promise<Database> {
  const database = await openDatabase(settings, options);
  try {
    await requireCurrentSchema(database);
    return database;
  } catch (error) {
    await database.close().catch(() => {});
    throw error;
  }
}

/** `0001_catalog`: a migration as its file is named. */
export function migrationName(migration: { version: number; name: string }): string {
  return `${String(migration.version).padStart(4, "0")}_${migration.name}`;
}

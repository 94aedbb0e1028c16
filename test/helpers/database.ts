import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterEach, beforeEach } from "vitest";
import { migrate } from "../../src/db/migrations.js";
import { type Database, openDatabase } from "../../src/db/open-database.js";

/** The PostgreSQL tests use (.ci/run exports it; trust auth on 127.0.0.1 by default). */
export const TEST_DATABASE_URL =
  process.env.GIFTJOBS_TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";

/** A schema name no other test (or run) uses: `gjt_<label>_<random>`. */
export function uniqueSchema(label: string): string {
  const tag = label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .slice(0, 24);
  return `gjt_${tag}_${randomBytes(5).toString("hex")}`;
}

/** One test's database: its schema, migrated, and what a child process or loadConfig needs. */
export interface TestDatabase {
  url: string;
  schema: string;
  /** An open, migrated Database (search_path on the schema). */
  database: Database;
  pool: pg.Pool;
  /** Settings for loadConfig's overrides. */
  config: { databaseUrl: string; databaseSchema: string };
  /** Environment for a child giftjobs. */
  env: { GIFTJOBS_DATABASE_URL: string; GIFTJOBS_DATABASE_SCHEMA: string };
}

/** Makes and migrates a schema of its own; `migrated: false` leaves it absent (db migrate tests). */
export async function createTestDatabase(
  label: string,
  options: { migrated?: boolean } = {},
): Promise<TestDatabase> {
  const schema = uniqueSchema(label);
  const settings = { databaseUrl: TEST_DATABASE_URL, databaseSchema: schema };
  const database = await openDatabase(settings);
  if (options.migrated !== false) await migrate(database);
  return {
    url: TEST_DATABASE_URL,
    schema,
    database,
    pool: database.pool,
    config: settings,
    env: { GIFTJOBS_DATABASE_URL: TEST_DATABASE_URL, GIFTJOBS_DATABASE_SCHEMA: schema },
  };
}

/** Drops the schema and everything in it, on a connection of its own; closes the pool. */
export async function dropTestDatabase(db: TestDatabase): Promise<void> {
  await db.database.close().catch(() => {});
  const client = new pg.Client({ connectionString: db.url });
  client.on("error", () => {});
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${db.schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/**
 * A new schema for each test of the file (or describe), migrated unless `migrated: false`,
 * dropped (cascade) after it. The object stays the same; its fields are the current test's.
 */
export function useTestDatabase(label: string, options: { migrated?: boolean } = {}): TestDatabase {
  const current = {} as TestDatabase;
  let made: TestDatabase | undefined;
  beforeEach(async () => {
    made = await createTestDatabase(label, options);
    Object.assign(current, made);
  });
  afterEach(async () => {
    if (made) await dropTestDatabase(made);
    made = undefined;
  });
  return current;
}

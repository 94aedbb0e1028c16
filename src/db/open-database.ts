import pg from "pg";
import { UserError } from "../errors/user-error.js";
import { DATABASE_SETTING, databaseFailure } from "./database-error.js";

/** Where giftjobs' tables are: a PostgreSQL URL and the schema inside it. */
export interface DatabaseSettings {
  databaseUrl: string | undefined;
  databaseSchema: string;
}

/** An open pool whose every connection works in `schema` (its search_path). */
export interface Database {
  pool: pg.Pool;
  schema: string;
  url: string;
  /** Closes the pool; waits for the connections it lent to come back. */
  close: () => Promise<void>;
}

export interface OpenDatabaseOptions {
  /** Connections at most. @defaultValue 4 */
  max?: number;
  /** Give up connecting after this long (PostgreSQL away). @defaultValue 5000 */
  connectTimeoutMs?: number;
}

/** A schema name fit to write into SQL unquoted (src/config.ts checks it the same way). */
export function quoteSchema(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new UserError(`GIFTJOBS_DATABASE_SCHEMA: not a plain lower-case name (got ${schema})`);
  }
  return `"${schema}"`;
}

/**
 * Opens a pool on `settings.databaseUrl` and checks it answers (one `SELECT 1`), so a bad URL,
 * a refused password or a server that is down fails here, in one line naming the setting
 * (src/db/database-error.ts), never later in the middle of a command.
 */
export async function openDatabase(
  settings: DatabaseSettings,
  options: OpenDatabaseOptions = {},
): Promise<Database> {
  const url = settings.databaseUrl;
  if (!url) throw new UserError(`${DATABASE_SETTING} is not set: this needs PostgreSQL`);
  let pool: pg.Pool;
  try {
    pool = new pg.Pool({
      connectionString: url,
      max: options.max ?? 4,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
      // A command that ends leaves no idle connection keeping the process alive.
      allowExitOnIdle: true,
      // Every connection finds giftjobs' tables first, so the SQL names them unqualified.
      options: `-c search_path=${quoteSchema(settings.databaseSchema)},public`,
    });
  } catch (error) {
    // pg parses the URL here; its message may quote the URL, password included.
    throw new UserError(`${DATABASE_SETTING}: not a PostgreSQL URL pg can read`, { cause: error });
  }
  // An idle connection that dies (the server restarting) must not crash the process: the
  // next query on the pool fails and says so.
  pool.on("error", () => {});
  const database: Database = {
    pool,
    schema: settings.databaseSchema,
    url,
    close: () => pool.end(),
  };
  try {
    await pool.query("SELECT 1");
  } catch (error) {
    await pool.end().catch(() => {});
    throw databaseFailure(error, url);
  }
  return database;
}

/**
 * One statement on the pool, its rows as `R`; a failure is the one-line error of
 * databaseFailure (the database down, named by GIFTJOBS_DATABASE_URL).
 */
export async function queryRows<R>(
  database: Database,
  text: string,
  values: unknown[] = [],
): Promise<R[]> {
  try {
    return (await database.pool.query(text, values)).rows as R[];
  } catch (error) {
    throw databaseFailure(error, database.url);
  }
}

/**
 * Runs `fn` with one connection of the pool, inside BEGIN ... COMMIT; ROLLBACK when it throws.
 * A connection lost on the way is destroyed rather than given back.
 */
export async function inTransaction<T>(
  database: Database,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await database.pool.connect();
  } catch (error) {
    throw databaseFailure(error, database.url);
  }
  // A connection killed while lent out emits "error" on the client: without a listener the
  // process would crash instead of the query failing.
  client.on("error", () => {});
  let broken: unknown;
  try {
    await client.query("BEGIN");
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    broken = error;
    await client.query("ROLLBACK").catch(() => {});
    throw databaseFailure(error, database.url);
  } finally {
    client.release(broken !== undefined ? (broken as Error) : undefined);
  }
}

import type pg from "pg";
import { RunError } from "../errors/run-error.js";

/**
 * PostgreSQL advisory locks, keyed by a name (hashed to a bigint by PostgreSQL's
 * hashtextextended): one holder at a time on every machine that uses the database; a holder
 * that dies (process killed, connection lost) lets go at once, its session gone
 * (docs/catalog-database.md, "Locks").
 */

/** Another process holds the lock: the caller stops with this one line (exit 1). */
export class LockHeldError extends RunError {
  override readonly name = "LockHeldError";
}

/** The key a lock name stands for, scoped to the schema so two schemas never block each other. */
function keyText(schema: string, name: string): string {
  return `giftjobs:${schema}:${name}`;
}

/**
 * Takes the transaction-level lock `name` on `client` (inside its open transaction), or throws
 * LockHeldError with `heldMessage` when another session holds it. Released at COMMIT or ROLLBACK.
 */
export async function takeTransactionLock(
  client: pg.ClientBase,
  schema: string,
  name: string,
  heldMessage: string,
): Promise<void> {
  const { rows } = await client.query<{ taken: boolean }>(
    "SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS taken",
    [keyText(schema, name)],
  );
  if (!rows[0]?.taken) throw new LockHeldError(heldMessage);
}

/**
 * Runs `fn` while holding the session-level lock `name` on `client`. `wait`: block until the
 * holder lets go; otherwise throw LockHeldError with `heldMessage` at once.
 */
export async function withSessionLock<T>(
  client: pg.ClientBase,
  schema: string,
  name: string,
  options: { wait: boolean; heldMessage: string },
  fn: () => Promise<T>,
): Promise<T> {
  const key = keyText(schema, name);
  if (options.wait) {
    await client.query("SELECT pg_advisory_lock(hashtextextended($1, 0))", [key]);
  } else {
    const { rows } = await client.query<{ taken: boolean }>(
      "SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS taken",
      [key],
    );
    if (!rows[0]?.taken) throw new LockHeldError(options.heldMessage);
  }
  try {
    return await fn();
  } finally {
    // A lost connection already let go of the lock; its unlock fails and is not the story.
    await client.query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [key]).catch(() => {});
  }
}

import { UserError } from "../errors/user-error.js";

/** The setting every database error names. */
export const DATABASE_SETTING = "GIFTJOBS_DATABASE_URL";

/**
 * PostgreSQL does not answer, went away, or refused what it was asked: one line naming the
 * setting and where (host and port, never the password), exit 1 as for Redis being away
 * (docs/catalog-database.md, "When PostgreSQL fails").
 */
export class DatabaseDownError extends UserError {
  override readonly name = "DatabaseDownError";
  override readonly exitCode: number = 1;
}

/** The URL's host and port, as errors name PostgreSQL: never the user's password. */
export function databaseAddress(url: string): string {
  try {
    const u = new URL(url);
    const database = u.pathname.replace(/^\//, "") || "postgres";
    return `${u.hostname || "localhost"}:${u.port || "5432"}/${decodeURIComponent(database)}`;
  } catch {
    return "(an unreadable URL)";
  }
}

/** Error codes of node and PostgreSQL that mean "the server is away or went away". */
const AWAY_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "EPIPE",
  "57P01", // admin_shutdown (pg_terminate_backend, a server stopping)
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now (starting up, shutting down)
]);

/** True when `error` says PostgreSQL is away (refused, timed out, terminated the connection). */
export function isDatabaseAway(error: unknown): boolean {
  const err = error as { code?: string; message?: string } | undefined;
  if (err?.code && AWAY_CODES.has(err.code)) return true;
  const message = err?.message ?? "";
  return /Connection terminated|connection timeout|Client has encountered a connection error|not queryable/i.test(
    message,
  );
}

/**
 * The one line for a failure to reach or use PostgreSQL at `url`: a refused password or an
 * unknown database or role is the operator's setting to fix (exit 2), the server being away
 * exit 1. Anything else is returned unchanged (a bug or a failed statement keeps its message).
 */
export function databaseFailure(error: unknown, url: string): Error {
  if (error instanceof UserError) return error;
  const where = `PostgreSQL at ${databaseAddress(url)}`;
  const code = (error as { code?: string } | undefined)?.code;
  const options = { cause: error };
  if (code === "28P01" || code === "28000") {
    return new UserError(
      `${DATABASE_SETTING}: ${where} refused the user and password (${code === "28P01" ? "password authentication failed" : "not allowed to connect"})`,
      options,
    );
  }
  if (code === "3D000") {
    return new UserError(`${DATABASE_SETTING}: ${where}: the database does not exist`, options);
  }
  if (code === "42501") {
    return new UserError(
      `${DATABASE_SETTING}: ${where}: the user may not do this (${(error as Error).message})`,
      options,
    );
  }
  if (isDatabaseAway(error)) {
    return new DatabaseDownError(
      `${where} does not answer or went away: is it running? (${DATABASE_SETTING})`,
      options,
    );
  }
  return error instanceof Error ? error : new Error(String(error));
}

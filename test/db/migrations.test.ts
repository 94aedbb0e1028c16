import { describe, expect, it } from "vitest";
import {
  knownMigrations,
  migrate,
  openCurrentDatabase,
  requireCurrentSchema,
  schemaStatus,
} from "../../src/db/migrations.js";
import { openDatabase } from "../../src/db/open-database.js";
import { useTestDatabase } from "../helpers/database.js";

describe("db migrations", () => {
  const db = useTestDatabase("migrations", { migrated: false });

  it("migrate creates the schema, applies every file once, in order, and records them", async () => {
    await expect(requireCurrentSchema(db.database)).rejects.toThrow(
      `the database schema ${db.schema} has no giftjobs tables, this giftjobs needs version ${knownMigrations().length}: run giftjobs db migrate`,
    );
    const first = await migrate(db.database);
    expect(first.applied.map((m) => m.version)).toEqual(knownMigrations().map((m) => m.version));
    const again = await migrate(db.database);
    expect(again.applied).toEqual([]);
    expect(again.version).toBe(first.version);
    await requireCurrentSchema(db.database);
    const status = await schemaStatus(db.database);
    expect(status).toMatchObject({ version: first.version, pending: [], changed: [] });
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM current_products");
    expect(rows[0].n).toBe(0);
  });

  it("two migrators at once: one applies, the other waits and finds nothing to do", async () => {
    const other = await openDatabase(db.config);
    try {
      const [a, b] = await Promise.all([migrate(db.database), migrate(other)]);
      const applied = [a.applied.length, b.applied.length].sort();
      expect(applied).toEqual([0, knownMigrations().length]);
    } finally {
      await other.close();
    }
  });

  it("a schema older or newer than the code is refused in one line", async () => {
    await migrate(db.database);
    const known = knownMigrations().length;
    await db.pool.query(
      `INSERT INTO schema_migrations (version, name, checksum) VALUES (${known + 1}, 'future', 'x')`,
    );
    await expect(requireCurrentSchema(db.database)).rejects.toThrow(
      `the database schema ${db.schema} is at version ${known + 1}, newer than this giftjobs knows (${known}): upgrade giftjobs`,
    );
    await expect(migrate(db.database)).rejects.toThrow(/newer than this giftjobs knows/);
    await expect(openCurrentDatabase(db.config)).rejects.toThrow(/upgrade giftjobs$/);
  });

  it("a failing migration applies nothing of itself and says which", async () => {
    const { mkdtemp, writeFile, rm } = await import("node:fs/promises");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const dir = await mkdtemp(join(tmpdir(), "gj-migrations-"));
    try {
      await writeFile(join(dir, "0001_one.sql"), "CREATE TABLE one (id int);");
      await writeFile(join(dir, "0002_two.sql"), "CREATE TABLE two (id int); SELECT nope;");
      const files = knownMigrations(dir);
      await expect(migrate(db.database, files)).rejects.toThrow(
        /^migration 0002_two failed, nothing of it applied: column "nope" does not exist$/,
      );
      const status = await schemaStatus(db.database, files);
      expect(status.version).toBe(1);
      const { rows } = await db.pool.query("SELECT to_regclass($1) AS two", [`${db.schema}.two`]);
      expect(rows[0].two).toBeNull();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("opening the database", () => {
  it("a refused password names the setting, never the password", async () => {
    const url = "postgres://giftjobs_nobody:s3cret-pw@127.0.0.1:5432/postgres";
    const error = await openDatabase({ databaseUrl: url, databaseSchema: "giftjobs" }).catch(
      (e: Error) => e,
    );
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    expect(message).toMatch(/^GIFTJOBS_DATABASE_URL: PostgreSQL at 127\.0\.0\.1:5432\/postgres/);
    expect(message).not.toContain("s3cret-pw");
  });

  it("a server that is down: one line naming the setting, exit 1", async () => {
    const url = "postgres://postgres:pw@127.0.0.1:1/postgres";
    const error = (await openDatabase({ databaseUrl: url, databaseSchema: "giftjobs" }).catch(
      (e: Error) => e,
    )) as Error & { exitCode: number };
    expect(error.message).toBe(
      "PostgreSQL at 127.0.0.1:1/postgres does not answer or went away: is it running? (GIFTJOBS_DATABASE_URL)",
    );
    expect(error.exitCode).toBe(1);
  });
});

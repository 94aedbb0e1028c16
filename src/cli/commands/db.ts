import { migrate, migrationName, schemaStatus } from "../../db/migrations.js";
import { type Database, openDatabase } from "../../db/open-database.js";
import { UserError } from "../../errors/user-error.js";
import { type CommandContext, createContext, printJson } from "../run-action.js";

/** The configured database, open; GIFTJOBS_DATABASE_URL unset is a user mistake here. */
async function withDatabase<T>(
  ctx: CommandContext,
  fn: (database: Database) => Promise<T>,
): Promise<T> {
  if (!ctx.config.databaseUrl) {
    throw new UserError(
      "GIFTJOBS_DATABASE_URL is not set: giftjobs keeps its catalog in files (docs/catalog-database.md)",
    );
  }
  const database = await openDatabase(ctx.config);
  try {
    return await fn(database);
  } finally {
    await database.close();
  }
}

/** `db migrate`. */
export async function runMigrate(flags: { json?: boolean }): Promise<number> {
  const ctx = createContext(Boolean(flags.json));
  const result = await withDatabase(ctx, (database) => migrate(database));
  const applied = result.applied.map(migrationName);
  if (ctx.json) {
    printJson({ schema: ctx.config.databaseSchema, version: result.version, applied });
    return 0;
  }
  const lines =
    applied.length === 0
      ? [`schema ${ctx.config.databaseSchema} is current (version ${result.version})`]
      : [
          ...applied.map((name) => `applied ${name}`),
          `schema ${ctx.config.databaseSchema} is at version ${result.version}`,
        ];
  process.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}

/** `db status`: exit 1 unless the schema is current. */
export async function runStatus(flags: { json?: boolean }): Promise<number> {
  const ctx = createContext(Boolean(flags.json));
  const status = await withDatabase(ctx, (database) => schemaStatus(database));
  const current = status.version === status.known && status.changed.length === 0;
  if (ctx.json) {
    printJson({
      schema: status.schema,
      version: status.version,
      known: status.known,
      current,
      applied: status.applied.map((a) => ({
        version: a.version,
        name: a.name,
        applied_at: a.appliedAt.toISOString(),
      })),
      pending: status.pending.map((m) => ({ version: m.version, name: m.name })),
      changed: status.changed.map((a) => ({ version: a.version, name: a.name })),
    });
    return current ? 0 : 1;
  }
  const lines = status.applied.map(
    (a) => `${migrationName(a)}  applied ${a.appliedAt.toISOString()}`,
  );
  for (const m of status.pending) lines.push(`${migrationName(m)}  pending`);
  for (const a of status.changed) {
    lines.push(`${migrationName(a)}  CHANGED since it was applied`);
  }
  if (status.version > status.known) {
    lines.push(
      `schema ${status.schema} is at version ${status.version}, newer than this giftjobs knows (${status.known}): upgrade giftjobs`,
    );
  } else if (status.pending.length > 0) {
    lines.push(
      `schema ${status.schema} needs ${status.pending.length} migration(s): run giftjobs db migrate`,
    );
  } else lines.push(`schema ${status.schema} is current (version ${status.version})`);
  process.stdout.write(`${lines.join("\n")}\n`);
  return current ? 0 : 1;
}

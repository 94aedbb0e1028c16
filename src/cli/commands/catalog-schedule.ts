import { scheduleCatalogSync, unscheduleCatalogSync } from "../../../jobs/catalog/schedule.js";
import { createContext, printJson } from "../run-action.js";
import { withRedis } from "../services.js";

/** `catalog schedule`: the nightly sync's job scheduler, registered (or changed). */
export async function runSchedule(flags: {
  cron: string;
  tz: string;
  json?: boolean;
}): Promise<number> {
  const ctx = createContext(Boolean(flags.json));
  const schedule = await withRedis(ctx.config, (connection) =>
    scheduleCatalogSync({ connection, prefix: ctx.config.prefix, cron: flags.cron, tz: flags.tz }),
  );
  if (ctx.json) printJson({ ...schedule, next: schedule.next?.toISOString() ?? null });
  else {
    const next = schedule.next ? `; next run ${schedule.next.toISOString()}` : "";
    process.stdout.write(`catalog sync scheduled: "${schedule.cron}" (${schedule.tz})${next}\n`);
  }
  return 0;
}

/** `catalog unschedule`. */
export async function runUnschedule(flags: { json?: boolean }): Promise<number> {
  const ctx = createContext(Boolean(flags.json));
  const removed = await withRedis(ctx.config, (connection) =>
    unscheduleCatalogSync({ connection, prefix: ctx.config.prefix }),
  );
  if (ctx.json) printJson({ removed });
  else
    process.stdout.write(
      removed ? "catalog sync unscheduled\n" : "no catalog sync was scheduled\n",
    );
  return 0;
}

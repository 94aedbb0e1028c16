import { campaignsEndedBefore } from "../campaigns/forget.js";
import type { Config } from "../config.js";
import { Ledger } from "../ledger/ledger.js";
import { commandClient, connectRedis, readyWithin } from "../redis/connection.js";
import { type DoctorCheck, failed, passed } from "./doctor-check.js";

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
/** Campaigns named in the check's line; the rest are counted. */
const NAMED = 5;

/**
 * With GIFTJOBS_FORGET_AFTER_DAYS set: the campaigns that ended longer ago than that and still
 * hold people's data (docs/architecture/forgetting.md). None: passed. Some: failed, naming them
 * (the nightly job has not run, or they have failed_uncertain rows to settle first).
 */
export async function retentionCheck(
  config: Pick<Config, "forgetAfterDays" | "prefix" | "redisUrl" | "redisClusterNodes">,
): Promise<DoctorCheck | undefined> {
  const days = config.forgetAfterDays;
  if (days === undefined) return undefined;
  const redis = connectRedis(config, { failFast: true });
  redis.on("error", () => {
    // The redis check reports Redis away; this one says it was not checked.
  });
  try {
    if (!(await readyWithin(redis, 3000)))
      return failed("retention", "not checked: Redis does not answer");
    const before = retentionCutoff(days);
    const due = await campaignsEndedBefore(new Ledger(commandClient(redis), config.prefix), before);
    return retentionOf(
      days,
      before,
      due.ended,
      due.skipped.map((s) => `${s.campaign} (${s.why})`),
    );
  } catch {
    return failed("retention", "not checked: Redis does not answer");
  } finally {
    redis.disconnect();
  }
}

/**
 * `days` ago, to the whole minute below: a time `orders forget --ended-before` takes as
 * written (`2026-10-29T13:45Z`), so the command the check prints forgets what it names.
 */
function retentionCutoff(days: number): Date {
  const at = Date.now() - days * DAY_MS;
  return new Date(at - (at % MINUTE_MS));
}

/** The command that forgets them now, runnable as printed: `orders forget` asks unless --yes. */
function forgetCommand(before: Date): string {
  return `giftjobs orders forget --ended-before ${before.toISOString().slice(0, 16)}Z --yes`;
}

function retentionOf(days: number, before: Date, ended: string[], stuck: string[]): DoctorCheck {
  const setting = `GIFTJOBS_FORGET_AFTER_DAYS=${days}`;
  if (ended.length === 0 && stuck.length === 0)
    return passed(
      "retention",
      `no campaign that ended more than ${days} days ago holds people's data (${setting})`,
    );
  const parts: string[] = [];
  if (ended.length > 0)
    parts.push(
      `${ended.length} campaigns ended more than ${days} days ago still hold people's data: ${named(ended)}; the worker's nightly job forgets them (a worker serving the maintenance queue), or run \`${forgetCommand(before)}\``,
    );
  if (stuck.length > 0) parts.push(`${stuck.length} cannot be forgotten yet: ${named(stuck)}`);
  return failed("retention", `${parts.join("; ")} (${setting})`);
}

function named(names: string[]): string {
  const shown = names.slice(0, NAMED).join(", ");
  return names.length > NAMED ? `${shown} and ${names.length - NAMED} more` : shown;
}

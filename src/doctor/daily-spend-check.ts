import { todaySpend, todaySpendText } from "../campaigns/today-spend.js";
import type { Config } from "../config.js";
import { daySpendOf } from "../daily-limit.js";
import { Ledger } from "../ledger/ledger.js";
import { commandClient, connectRedis, readyWithin } from "../redis/connection.js";
import { type DoctorCheck, failed, passed } from "./doctor-check.js";

/**
 * Today's spend across campaigns, per currency, beside GIFTJOBS_DAILY_LIMIT (docs/commands.md,
 * "The daily limit"): what an operator checks before raising or setting a limit. Passed
 * whatever it holds (the workers keep the limit); not read: failed, as the redis check says why.
 */
export async function dailySpendCheck(
  config: Pick<Config, "prefix" | "redisUrl" | "redisClusterNodes" | "dailyLimit" | "limitTz">,
): Promise<DoctorCheck> {
  const redis = connectRedis(config, { failFast: true });
  redis.on("error", () => {
    // The redis check reports Redis away; this one says it was not checked.
  });
  try {
    if (!(await readyWithin(redis, 3000)))
      return failed("daily-spend", "not checked: Redis does not answer");
    const ledger = new Ledger(commandClient(redis), config.prefix);
    return passed("daily-spend", todaySpendText(await todaySpend(ledger, daySpendOf(config))));
  } catch {
    return failed("daily-spend", "not checked: Redis does not answer");
  } finally {
    redis.disconnect();
  }
}

import { Worker } from "bullmq";
import type { ForgetJobData, ForgetJobResult } from "../../jobs/maintenance/job.js";
import { createForgetProcessor } from "../../jobs/maintenance/process.js";
import { syncForgetSchedule } from "../../jobs/maintenance/schedule.js";
import { QUEUES } from "../../jobs/registry.js";
import { currentActor } from "../audit/actor.js";
import { trailOf } from "../audit/trail-of.js";
import { forgetDetails } from "../campaigns/forget.js";
import { Ledger } from "../ledger/ledger.js";
import { commandClient } from "../redis/connection.js";
import { type QueueContext, type QueueRunner, quietIfAway } from "./queue-runner.js";

/**
 * The `maintenance` queue's worker (jobs/maintenance/process.ts): the nightly forget, one job at
 * a time. At start it registers the job scheduler when GIFTJOBS_FORGET_AFTER_DAYS is set, and
 * removes it when not (docs/architecture/forgetting.md, "The nightly job").
 */
export function startMaintenanceQueue(context: QueueContext): QueueRunner {
  const { options, connection, log, active, outage } = context;
  const { config } = options;
  const redis = commandClient(connection);
  const afterDays = config.forgetAfterDays;
  const processor = createForgetProcessor({
    redis,
    ledger: new Ledger(redis, config.prefix),
    dataDir: config.dataDir,
    afterDays,
    log,
    // One entry a night that forgot something, as the worker's OS user or GIFTJOBS_ACTOR
    // (docs/architecture/audit.md, "What is recorded").
    onForgotten: async (summary) => {
      if (summary.campaigns.length === 0) return;
      await trailOf({ database: context.database, dataDir: config.dataDir }).append({
        actor: currentActor(),
        action: "forget",
        campaign: null,
        details: { ...forgetDetails(summary), by: "nightly job" },
        result: "ok",
      });
    },
  });
  const worker = new Worker<ForgetJobData, ForgetJobResult>(
    QUEUES.maintenance,
    active.counted(processor),
    { connection, prefix: config.prefix, concurrency: 1 },
  );
  const scheduling = syncForgetSchedule(
    { connection, prefix: config.prefix },
    afterDays !== undefined,
  ).catch((error: Error) =>
    quietIfAway(outage, log, error, "the nightly forget was not scheduled"),
  );
  return { worker, beforeWorkers: () => scheduling };
}

import { Worker } from "bullmq";
import type { ForgetJobData, ForgetJobResult } from "../../jobs/maintenance/job.js";
import { createForgetProcessor } from "../../jobs/maintenance/process.js";
import { syncNightlySchedule } from "../../jobs/maintenance/schedule.js";
import { QUEUES } from "../../jobs/registry.js";
import { currentActor } from "../audit/actor.js";
import { forgetDetails } from "../campaigns/forget.js";
import { Ledger } from "../ledger/ledger.js";
import { commandClient } from "../redis/connection.js";
import { type QueueContext, type QueueRunner, quietIfAway } from "./queue-runner.js";

/**
 * The `maintenance` queue's worker (jobs/maintenance/process.ts): the nightly forget (with
 * GIFTJOBS_FORGET_AFTER_DAYS) and prune of the paid memory, one job at a time. At start it
 * registers the job scheduler (docs/architecture/forgetting.md, "The nightly job").
 */
export function startMaintenanceQueue(context: QueueContext): QueueRunner {
  const { options, connection, log, active, outage } = context;
  const { config } = options;
  const redis = commandClient(connection);
  const { stores } = context;
  const processor = createForgetProcessor({
    redis,
    ledger: new Ledger(redis, config.prefix),
    dataDir: config.dataDir,
    afterDays: config.forgetAfterDays,
    paidMemory: stores.paidMemory,
    repeatWindowDays: config.repeatWindowDays,
    log,
    // One entry a night that forgot something, and one a night that pruned something, as the
    // worker's OS user or GIFTJOBS_ACTOR (docs/architecture/audit.md, "What is recorded").
    onForgotten: async (summary) => {
      if (summary.campaigns.length === 0) return;
      await stores.audit.append({
        actor: currentActor(),
        action: "forget",
        campaign: null,
        details: { ...forgetDetails(summary), by: "nightly job" },
        result: "ok",
      });
    },
    onPruned: async (pruned, before) => {
      await stores.audit.append({
        actor: currentActor(),
        action: "prune",
        campaign: null,
        details: {
          ...pruned,
          recorded_before: before.toISOString(),
          window_days: config.repeatWindowDays,
          by: "nightly job",
        },
        result: "ok",
      });
    },
  });
  const worker = new Worker<ForgetJobData, ForgetJobResult>(
    QUEUES.maintenance,
    active.counted(processor),
    { connection, prefix: config.prefix, concurrency: 1 },
  );
  const scheduling = syncNightlySchedule({ connection, prefix: config.prefix }).catch(
    (error: Error) => quietIfAway(outage, log, error, "the nightly job was not scheduled"),
  );
  return { worker, beforeWorkers: () => scheduling };
}

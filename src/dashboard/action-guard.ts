import type { BeforeHookResult, HookContext } from "@bull-board/api/dist/types.js";

/** Job states whose jobs are history: removing or re-running them leaves no ledger row behind. */
const FINISHED = new Set(["completed", "failed"]);

const REFUSED: BeforeHookResult = {
  allow: false,
  status: 403,
  message: "giftjobs dashboard: only retry of failed jobs and clean of finished jobs are enabled",
};

/**
 * With `--allow-actions` bull-board would allow every action. Only two are let through:
 * retry of failed jobs (same key: safe) and clean of completed or failed jobs. Removing a
 * waiting or delayed order job would leave its rows queued in the ledger with nothing to send
 * them; pausing, emptying, adding and editing have their own commands or no place here.
 */
export async function allowRetryAndClean(context: HookContext): Promise<BeforeHookResult> {
  if (context.method === "get") return undefined;
  const params = context.request.params as Record<string, string | undefined>;
  switch (context.route) {
    case "/api/queues/:queueName/retry/:queueStatus":
      return params.queueStatus === "failed" ? undefined : REFUSED;
    case "/api/queues/:queueName/clean/:queueStatus":
      return FINISHED.has(params.queueStatus ?? "") ? undefined : REFUSED;
    case "/api/queues/:queueName/:jobId/retry":
      return (await jobState(context, params)) === "failed" ? undefined : REFUSED;
    case "/api/queues/:queueName/:jobId/clean":
      return FINISHED.has(await jobState(context, params)) ? undefined : REFUSED;
    default:
      return REFUSED;
  }
}

async function jobState(
  context: HookContext,
  params: Record<string, string | undefined>,
): Promise<string> {
  const queue = context.request.queues.get(params.queueName ?? "");
  const job = await queue?.getJob(params.jobId ?? "");
  return job ? await job.getState() : "unknown";
}

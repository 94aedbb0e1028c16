import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { ExpressAdapter } from "@bull-board/express";
import type { Queue } from "bullmq";
import type { Router } from "express";
import { allowRetryAndClean } from "./action-guard.js";
import { maskEmailsDeep } from "./mask-emails-deep.js";

type BoardServerAdapter = Parameters<typeof createBullBoard>[0]["serverAdapter"];

export interface QueueBoardOptions {
  queues: Queue[];
  /** Where the board is mounted, e.g. `/queues`. */
  basePath: string;
  /** Retry and clean from the page; otherwise read-only. @defaultValue false */
  allowActions?: boolean;
  /** Link back to the campaigns page. @defaultValue `/` */
  campaignsPath?: string;
}

/** bull-board for the given queues, read-only unless actions are allowed, as an express router. */
export function queueBoard(options: QueueBoardOptions): Router {
  const allowActions = options.allowActions ?? false;
  const serverAdapter = new ExpressAdapter().setBasePath(options.basePath);
  // allowCompletedRetries is read by bull-board but missing from its option type: hence a variable.
  // The action guard refuses retrying completed jobs anyway; this hides the button.
  const adapterOptions = {
    readOnlyMode: !allowActions,
    allowRetries: allowActions,
    allowCompletedRetries: false,
  };
  const adapters = options.queues.map((queue) => {
    const adapter = new BullMQAdapter(queue, adapterOptions);
    adapter.setFormatter("data", maskEmailsDeep);
    return adapter;
  });
  createBullBoard({
    queues: adapters,
    // @bull-board/express 9.10.1 brings its own @bull-board/api 9.10.1, whose types differ from
    // the 9.10.2 installed here only by declaration site; the adapter works with either.
    serverAdapter: serverAdapter as unknown as BoardServerAdapter,
    options: {
      uiConfig: {
        boardTitle: "giftjobs",
        miscLinks: [{ text: "Campaigns", url: options.campaignsPath ?? "/" }],
      },
      handlerHooks: allowActions ? { before: allowRetryAndClean } : undefined,
    },
  });
  return serverAdapter.getRouter() as Router;
}

import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { ExpressAdapter } from "@bull-board/express";
import type { Queue } from "bullmq";
import { type NextFunction, type Request, type Response, Router } from "express";
import { QUEUES } from "../../jobs/registry.js";
import { allowRetryAndClean } from "./action-guard.js";
import { maskEmailsDeep } from "./mask-emails-deep.js";
import { type WaitingRows, waitingBanner, waitingLine } from "./queue-rows.js";

type BoardServerAdapter = Parameters<typeof createBullBoard>[0]["serverAdapter"];

export interface QueueBoardOptions {
  queues: Queue[];
  /** Where the board is mounted, e.g. `/queues`. */
  basePath: string;
  /** Retry and clean from the page; otherwise read-only. @defaultValue false */
  allowActions?: boolean;
  /** Link back to the campaigns page. @defaultValue `/` */
  campaignsPath?: string;
  /**
   * The rows each campaign has still to send (waitingRows): on a banner above the board, with
   * the link back to the campaigns, and as the orders queue's description.
   */
  waiting?: () => Promise<WaitingRows[]>;
}

/** bull-board for the given queues, read-only unless actions are allowed, as an express router. */
export function queueBoard(options: QueueBoardOptions): Router {
  const campaignsPath = options.campaignsPath ?? "/";
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
        miscLinks: [{ text: "Campaigns", url: campaignsPath }],
      },
      handlerHooks: allowActions ? { before: allowRetryAndClean } : undefined,
    },
  });
  const board = serverAdapter.getRouter() as Router;
  if (!options.waiting) return board;
  const orders = adapters[options.queues.findIndex((q) => q.name === QUEUES.orders)];
  const router = Router();
  router.use(withRows(options.waiting, campaignsPath, orders));
  router.use(board);
  return router;
}

/**
 * Rows, not just jobs (docs/architecture/operators.md, "The dashboard"): before bull-board
 * answers its queues' API, the orders queue's description becomes the line of rows waiting per
 * campaign (its page polls that API, so the line stays current); its HTML page gets the banner
 * with the link back to the campaigns, put before the app's root (bull-board renders into it).
 */
function withRows(
  waiting: () => Promise<WaitingRows[]>,
  campaignsPath: string,
  orders: BullMQAdapter | undefined,
) {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      if (req.method !== "GET" || req.path.startsWith("/static/")) return next();
      const isApi = req.path.startsWith("/api/");
      if (isApi && req.path !== "/api/queues") return next();
      const list = await waiting();
      // bull-board reads the description on each answer; its type says readonly.
      if (orders) (orders as unknown as { description: string }).description = waitingLine(list);
      if (!isApi) injectBanner(res, waitingBanner(list, campaignsPath));
      next();
    } catch (error) {
      next(error);
    }
  };
}

/** Puts `banner` before bull-board's `<div id="root">` in the page it sends. */
function injectBanner(res: Response, banner: string): void {
  const send = res.send.bind(res);
  res.send = (body?: unknown) => {
    if (typeof body === "string" && body.includes('<div id="root">'))
      return send(body.replace('<div id="root">', `${banner}\n<div id="root">`));
    return send(body);
  };
}

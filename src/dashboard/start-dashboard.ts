import { createServer } from "node:http";
import { Queue } from "bullmq";
import express, { type Express, type NextFunction, type Request, type Response } from "express";
import { QUEUES } from "../../jobs/registry.js";
import type { AuditTrail } from "../audit/trail.js";
import { WorkerBeats } from "../campaigns/worker-beats.js";
import type { Config } from "../config.js";
import { type DailyLimit, dailyLimitOf } from "../daily-limit.js";
import { ConfigError } from "../errors/config-error.js";
import { Ledger } from "../ledger/ledger.js";
import type { Logger } from "../log.js";
import { silentLogger } from "../log.js";
import { closeServer, httpUrl, listen } from "../metrics/listen.js";
import {
  commandClient,
  connectRedis,
  type RedisConnection,
  readyWithin,
} from "../redis/connection.js";
import { OutageReporter, redisAddress } from "../redis/outage-reporter.js";
import { assertRedisAnswers, RedisDownError, redisDownMessage } from "../redis/redis-down.js";
import { openStores, type Stores } from "../stores/stores.js";
import { ActionToken, DASHBOARD_TOKEN_ENV } from "./action-token.js";
import { campaignRoutes } from "./campaign-routes.js";
import { acceptedHosts, hostGuard, isLoopback, originGuard, publicHostName } from "./host-guard.js";
import { escapeHtml } from "./html-escape.js";
import { loginRoutes } from "./login-routes.js";
import { MinuteHistory } from "./minute-history.js";
import { queueBoard } from "./queue-board.js";
import { waitingRows } from "./queue-rows.js";
import { redisGate, sendRedisDown } from "./redis-gate.js";
import { openDashboard } from "./request-user.js";
import { changesNeed, LOGIN_PATH, refuseTokenInUrl, SignIn } from "./sign-in.js";
import { UserTokens } from "./user-tokens.js";
import { usersOf } from "./users-file.js";

/** Where bull-board is mounted. */
const BOARD_PATH = "/queues";

/** Options of `startDashboard`. */
export interface StartDashboardOptions {
  config: Config;
  /** 0 picks a free port. @defaultValue 3000 */
  port?: number;
  /** Interface to bind; anything but loopback shows the queues to the network. @defaultValue `127.0.0.1` */
  host?: string;
  /**
   * Host names the dashboard answers to besides the loopback names and the bound address
   * (`--public-host`): the names people and a reverse proxy reach it by. Any other Host
   * header gets 421. @defaultValue []
   */
  publicHosts?: readonly string[];
  /**
   * Retry failed jobs and clean finished ones in bull-board, and approve, pause, resume, retry
   * and cancel campaigns from their pages. @defaultValue false
   */
  allowActions?: boolean;
  /**
   * The token actions need (GIFTJOBS_DASHBOARD_TOKEN), at least 16 characters. Required with
   * `allowActions` on a non-loopback bind or with `publicHosts`; when given, actions always
   * need it.
   */
  actionToken?: string;
  /**
   * The users file (`--users`, users-file.ts): every page then needs a signed-in user, and
   * each action the role it names. Read and checked before Redis is connected; it replaces
   * the shared token, which must then be unset.
   */
  usersFile?: string;
  /** @defaultValue silentLogger */
  log?: Logger;
}

export interface RunningDashboard {
  /** `http://host:port/`: the campaigns page; the queues are under `/queues`. */
  url: string;
  /** Stops listening, then closes the queues and Redis. */
  close(): Promise<void>;
}

/**
 * Serves the campaigns page (`/`, `/campaigns`, `/campaigns.json`), each campaign's page
 * (`/campaigns/NAME`, its report at `/campaigns/NAME/report.csv`) and bull-board for the giftjobs
 * queues (`/queues`) under the configured prefix. Every request's Host is checked, and every
 * change's Origin and, where needed, the token (docs/architecture/operators.md, "The dashboard's
 * guards"); a missing token is refused before Redis is connected.
 */
export async function startDashboard(options: StartDashboardOptions): Promise<RunningDashboard> {
  const { config } = options;
  const host = options.host ?? "127.0.0.1";
  const log = options.log ?? silentLogger;
  const allowActions = options.allowActions ?? false;
  const publicHosts = (options.publicHosts ?? []).map(publicHostName);
  // Opened once: the audit trail, and the users when a users file is given.
  const opened = await openStoresOrWarn(config, log);
  let signIn: SignIn | undefined;
  try {
    signIn = await signInFor(options, host, publicHosts, opened);
  } catch (error) {
    await opened.stores?.close().catch(() => {});
    throw error;
  }
  // No offline queue: while Redis is away a page's reads fail at once, and the page says so,
  // instead of waiting for reconnects (docs/architecture/redis.md, "Redis outages").
  const redis = connectRedis(config, { failFast: true });
  // Until it serves, a Redis away is the start's one line (RedisDownError), nothing more.
  redis.on("error", () => {});
  let serving = false;
  // Redis away: one line every few seconds (pages say so too), not an error per reconnect.
  const outage = new OutageReporter(redisAddress(config));
  const queues = Object.values(QUEUES).map((name) => {
    const queue = new Queue(name, { connection: redis, prefix: config.prefix });
    queue.on("error", (error) => {
      if (serving && !outage.failed(error)) log.error({ err: error }, "dashboard: queue error");
    });
    return queue;
  });
  const audit = opened.stores?.audit;
  const closeRedis = async () => {
    await opened.stores?.close().catch(() => {});
    outage.close();
    await Promise.all(queues.map((q) => q.close()));
    await redis.quit().catch(() => redis.disconnect());
  };
  try {
    // Without an offline queue, a PING before the connection is up would fail at once.
    if (!(await readyWithin(redis, 2000))) throw new RedisDownError(config);
    await assertRedisAnswers(redis, config);
    outage.watch(redis);
    serving = true;
    const app = dashboardApp({
      redis,
      redisDown: redisDownMessage(config),
      ledger: new Ledger(commandClient(redis), config.prefix),
      workers: new WorkerBeats(commandClient(redis), config.prefix),
      history: new MinuteHistory(commandClient(redis), config.prefix),
      queues,
      allowActions,
      accepts: acceptedHosts(host, publicHosts),
      signIn,
      log,
      outage,
      audit,
      dailyLimit: dailyLimitOf(config),
    });
    const server = createServer(app);
    const port = await listen(server, options.port ?? 3000, host);
    return {
      url: httpUrl(host, port),
      close: async () => {
        await closeServer(server);
        await closeRedis();
      },
    };
  } catch (error) {
    await closeRedis();
    throw error;
  }
}

/**
 * Who may sign in: the users file's users, else the shared token's one user when actions are
 * allowed, else nobody (a read-only dashboard, or actions on loopback only).
 */
async function signInFor(
  options: StartDashboardOptions,
  host: string,
  publicHosts: readonly string[],
  opened: OpenedStores,
): Promise<SignIn | undefined> {
  if (options.usersFile !== undefined) {
    if (options.actionToken)
      throw new ConfigError(
        DASHBOARD_TOKEN_ENV,
        "is set, and so is --users: the users file replaces the shared token; unset it",
      );
    // The stores cannot be opened (PostgreSQL away): the users cannot be checked either.
    if (!opened.stores) throw opened.error;
    const users = opened.stores.users({ path: options.usersFile, setting: "--users" });
    return new SignIn(new UserTokens(await usersOf(users)));
  }
  if (!options.allowActions) return undefined;
  const token = actionTokenFor(host, publicHosts, options.actionToken);
  return token ? new SignIn(token) : undefined;
}

/** The stores, or the error that kept them closed. */
type OpenedStores = { stores: Stores; error?: undefined } | { stores?: undefined; error: unknown };

/**
 * The stores (src/stores/stores.ts), or none, logged, when they cannot be opened (PostgreSQL
 * away or not migrated): the pages show no audit entries, and only pause and cancel run.
 */
async function openStoresOrWarn(config: Config, log: Logger): Promise<OpenedStores> {
  try {
    return { stores: await openStores(config, { max: 2 }) };
  } catch (error) {
    log.warn(
      { err: error },
      "dashboard: the audit trail cannot be opened; only pause and cancel run",
    );
    return { error };
  }
}

/**
 * The token actions need, or undefined when none is. Actions reached from other machines (a
 * non-loopback bind, or a public host name behind a proxy) need one: the CSRF token alone is
 * handed to whoever can load a page (docs/architecture/operators.md, "The dashboard's guards").
 */
function actionTokenFor(
  host: string,
  publicHosts: readonly string[],
  token: string | undefined,
): ActionToken | undefined {
  if (token) return new ActionToken(token);
  if (isLoopback(host) && publicHosts.length === 0) return undefined;
  throw new ConfigError(
    DASHBOARD_TOKEN_ENV,
    "is not set: --allow-actions on a dashboard reached from other machines (a --host other than loopback, or a --public-host) needs it; set it to a long random value (openssl rand -base64 32)",
  );
}

interface AppDeps {
  redis: RedisConnection;
  /** The plain line of a Redis that does not answer (redisDownMessage). */
  redisDown: string;
  ledger: Ledger;
  workers: WorkerBeats;
  history: MinuteHistory;
  queues: Queue[];
  allowActions: boolean;
  /** The Host names answered (host-guard.ts). */
  accepts: (host: string) => boolean;
  /** Undefined on a dashboard nobody signs in to: every request is then OPEN_USER's. */
  signIn: SignIn | undefined;
  log: Logger;
  outage: OutageReporter;
  audit: AuditTrail | undefined;
  dailyLimit: DailyLimit | undefined;
}

function dashboardApp(deps: AppDeps): Express {
  const { signIn } = deps;
  const app = express();
  app.disable("x-powered-by");
  // In this order: no page, token or login form for a foreign Host; no change for a foreign
  // Origin; no token in a URL; then the user, who must have signed in for what changes
  // something (bull-board's requests included) and, with named users, for every page.
  app.use(hostGuard(deps.accepts));
  app.use(originGuard(deps.accepts));
  app.use(refuseTokenInUrl());
  const wantsJson = (req: Request) =>
    req.path.endsWith(".json") || req.path.startsWith(`${BOARD_PATH}/api/`);
  // Before anything that reads Redis: a Redis away is a 503 page at once, not a hang.
  app.use(redisGate({ redis: deps.redis, message: deps.redisDown, wantsJson }));
  if (signIn) {
    app.use(loginRoutes({ signIn, boardPath: BOARD_PATH, log: deps.log }));
    app.use(signIn.guard(wantsJson));
  } else app.use(openDashboard());
  app.use(
    campaignRoutes({
      ledger: deps.ledger,
      workers: deps.workers,
      history: deps.history,
      boardPath: BOARD_PATH,
      allowActions: deps.allowActions,
      loginPath: signIn ? LOGIN_PATH : undefined,
      audit: deps.audit,
      dailyLimit: deps.dailyLimit,
      log: deps.log,
    }),
  );
  app.use(
    BOARD_PATH,
    changesNeed("operate", "retry or clean jobs"),
    queueBoard({
      queues: deps.queues,
      basePath: BOARD_PATH,
      allowActions: deps.allowActions,
      campaignsPath: "/campaigns",
      waiting: () => waitingRows(deps.ledger),
    }),
  );
  app.use((error: Error, req: Request, res: Response, _next: NextFunction) => {
    // Redis went away while the page read it: the same 503 as the gate's, in plain words.
    if (deps.outage.failed(error)) {
      sendRedisDown(res, deps.redisDown, wantsJson(req));
      return;
    }
    deps.log.error({ err: error }, "dashboard: request failed");
    res
      .status(500)
      .type("html")
      .send(`<p>giftjobs dashboard: ${escapeHtml(error.message)}</p>`);
  });
  return app;
}

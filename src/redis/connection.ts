import type { Command, RedisOptions } from "ioredis";
import { Cluster, Redis } from "ioredis";
import { type ClusterSeed, ENV_NAMES, redisPasswordsOf } from "../config.js";
import { registerSecret } from "../log.js";

/**
 * A connection that sends the commands issued during one turn of the event loop in one write:
 * the socket is corked at the first command and uncorked by setImmediate. A worker issues
 * ledger and BullMQ commands from the callbacks of many HTTP responses that land in the same
 * turn; a write per command is a system call per command, which on a small VM costs more than
 * Redis takes to run the command. Commands, replies and their order are unchanged; a command
 * waits at most until the end of the turn.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export class CoalescingRedis extends Redis {
  private corked = false;

  override sendCommand(command: Command, stream?: Parameters<Redis["sendCommand"]>[1]): unknown {
    const socket = this.stream;
    if (!this.corked && this.status === "ready" && socket) {
      this.corked = true;
      socket.cork();
      setImmediate(() => {
        this.corked = false;
        socket.uncork();
      });
    }
    return super.sendCommand(command, stream);
  }
}

/** A connection to one Redis or to a Redis Cluster; BullMQ and the ledger take either. */
export type RedisConnection = Redis | Cluster;

/** Where Redis is: the settings of `Config` that say so. */
export interface RedisSettings {
  redisUrl: string;
  redisClusterNodes?: ClusterSeed[] | undefined;
}

export interface ConnectOptions {
  /** A BullMQ worker's connection: commands wait for Redis however long it is away. */
  forWorker?: boolean;
  lazy?: boolean;
  /** One write per event-loop turn (CoalescingRedis); one Redis only. */
  coalesceWrites?: boolean;
  /** Commands fail at once while disconnected instead of waiting (no offline queue); one Redis only. */
  failFast?: boolean;
}

/**
 * Opens the connection every part of giftjobs uses (BullMQ queues and workers, the ledger, locks,
 * the scheduler, the dashboard, metrics): a cluster client when `redisClusterNodes` is set, one
 * Redis otherwise. A string is a Redis URL. `maxRetriesPerRequest: null` is what BullMQ workers
 * require (blocking commands must not give up); other clients get a bounded retry so that a
 * dead Redis is reported instead of hanging. `coalesceWrites` gives a CoalescingRedis, for
 * connections with many commands in flight (a cluster client keeps a connection per node and
 * writes as ioredis does).
 */
export function connectRedis(
  target: string | RedisSettings,
  options: ConnectOptions = {},
): RedisConnection {
  const settings = typeof target === "string" ? { redisUrl: target } : target;
  registerPassword(settings.redisUrl);
  if (settings.redisClusterNodes)
    return connectCluster(settings.redisClusterNodes, settings.redisUrl, options);
  const base = {
    maxRetriesPerRequest: options.forWorker ? null : 3,
    enableReadyCheck: true,
    enableOfflineQueue: !options.failFast,
    lazyConnect: options.lazy ?? false,
    // Never log the URL: it may carry a password.
    connectionName: "giftjobs",
  } satisfies RedisOptions;
  const url = settings.redisUrl;
  return options.coalesceWrites ? new CoalescingRedis(url, base) : new Redis(url, base);
}

/**
 * A cluster client seeded with `nodes`; user, password and TLS (`rediss://`) come from `url`.
 * A node that goes away is not reconnected (ioredis 6's default): commands queued on it would
 * wait for it for ever; they are retried through the slot map instead, which is refreshed
 * every 2 s, so a failover is followed within seconds of the replica's promotion.
 */
function connectCluster(nodes: ClusterSeed[], url: string, options: ConnectOptions): Cluster {
  const parsed = new URL(url);
  return new Cluster(
    nodes.map((node) => ({ host: node.host, port: node.port })),
    {
      lazyConnect: options.lazy ?? false,
      enableReadyCheck: true,
      clusterRetryStrategy: (times) => Math.min(100 * times, 2000),
      // A failover takes the cluster's node timeout and an election (15-20 s by default):
      // commands are retried through it rather than failed.
      maxRedirections: 80,
      retryDelayOnFailover: 300,
      retryDelayOnClusterDown: 300,
      retryDelayOnTryAgain: 300,
      slotsRefreshInterval: 2000,
      slotsRefreshTimeout: 2000,
      redisOptions: {
        maxRetriesPerRequest: options.forWorker ? null : 3,
        connectionName: "giftjobs",
        username: decodeURIComponent(parsed.username) || undefined,
        password: decodeURIComponent(parsed.password) || undefined,
        tls: parsed.protocol === "rediss:" ? {} : undefined,
      },
    },
  );
}

/**
 * A connection to one node only (`node`, or the URL's own), never redirected, retried or
 * reconnected, with the credentials and TLS of the settings: for asking each node of a
 * cluster about itself (`doctor`). Connect it with `connect()`.
 */
export function connectNode(settings: RedisSettings, node?: ClusterSeed): Redis {
  const probe = {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 3000,
    connectionName: "giftjobs",
  } satisfies RedisOptions;
  registerPassword(settings.redisUrl);
  if (!node) return new Redis(settings.redisUrl, probe);
  const parsed = new URL(settings.redisUrl);
  return new Redis({
    ...probe,
    host: node.host,
    port: node.port,
    username: decodeURIComponent(parsed.username) || undefined,
    password: decodeURIComponent(parsed.password) || undefined,
    tls: parsed.protocol === "rediss:" ? {} : undefined,
  });
}

/**
 * Every connection is made here, so a library user's logs are scrubbed of the Redis password
 * as the CLI's are (the URL's password is also the cluster nodes' password).
 */
function registerPassword(url: string): void {
  for (const password of redisPasswordsOf(url)) registerSecret(password);
}

/** Redis as a message may name it: the URL without its password, or the cluster's seed nodes. */
export function describeRedis(settings: string | RedisSettings): string {
  const s = typeof settings === "string" ? { redisUrl: settings } : settings;
  if (s.redisClusterNodes) {
    const nodes = s.redisClusterNodes.map((n) => `${n.host}:${n.port}`).join(",");
    return `the Redis Cluster at ${nodes} (${ENV_NAMES.redisClusterNodes})`;
  }
  return `${s.redisUrl.replace(/\/\/[^@/]*@/, "//***@")} (${ENV_NAMES.redisUrl})`;
}

/**
 * The ledger is typed against a single Redis; a Cluster has the same command methods
 * (defineCommand, multi, the key commands, each routed to its key's slot), so it is handed
 * over as one.
 */
export function commandClient(connection: RedisConnection): Redis {
  return connection as Redis;
}

/**
 * Resolves true once `redis` is ready, or false after `ms`: for a connection without an offline
 * queue (`failFast`), whose commands fail at once until it is up. Not events.once: it would
 * reject on the "error" events of a Redis that is away.
 */
export function readyWithin(redis: RedisConnection, ms: number): Promise<boolean> {
  if (redis.status === "ready") return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ready: boolean) => {
      clearTimeout(timer);
      redis.off("ready", onReady);
      resolve(ready);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), ms);
    redis.once("ready", onReady);
  });
}

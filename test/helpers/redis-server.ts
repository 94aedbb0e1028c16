// A redis-server of the test's own (Debian's binary), on a free loopback port, in a folder of
// its own: for tests that stop, kill and restart Redis, or need settings the shared one lacks.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { cleanUpLater } from "./cleanup.js";
import { freePort } from "./free-port.js";
import { removeDir } from "./tmp-dir.js";

export interface RedisServerOptions {
  /** Folder of its data; a new temporary folder when not given. */
  dir?: string;
  /** Port; a free one when not given. */
  port?: number;
  /** More `--name value` arguments (e.g. `--appendonly yes`). */
  args?: string[];
}

export interface RedisServer {
  port: number;
  dir: string;
  url: string;
  /** `127.0.0.1:PORT`. */
  address: string;
  /** The running process (undefined once stopped). */
  child(): ChildProcess | undefined;
  /** SHUTDOWN as an operator would (SIGTERM: redis-server saves and exits). */
  stop(): Promise<void>;
  /** SIGKILL: no save, no goodbye. */
  kill(): Promise<void>;
  /** Starts it again on the same port and folder with the same arguments. */
  restart(): Promise<void>;
}

/** Starts redis-server; it is killed after the test (or file) that started it. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  // A folder of its own is removed after the server is killed (clean-ups run in order).
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), "gj-redis-")));
  await mkdir(dir, { recursive: true });
  const port = options.port ?? (await freePort());
  const args = [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--dir",
    dir,
    "--save",
    "",
    "--protected-mode",
    "yes",
    ...(options.args ?? []),
  ];
  let child: ChildProcess | undefined;
  const url = `redis://127.0.0.1:${port}`;
  const launch = async () => {
    child = spawn("redis-server", args, { stdio: "ignore" });
    await waitUntilAnswering(port, child);
  };
  const end = async (signal: NodeJS.Signals) => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once("exit", resolve));
    running.kill(signal);
    await exited;
  };
  await launch();
  cleanUpLater(() => end("SIGKILL"));
  if (!options.dir) cleanUpLater(() => removeDir(dir));
  return {
    port,
    dir,
    url,
    address: `127.0.0.1:${port}`,
    child: () => child,
    stop: () => end("SIGTERM"),
    kill: () => end("SIGKILL"),
    restart: launch,
  };
}

async function waitUntilAnswering(port: number, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode}`);
    try {
      // LOADING (an append-only file being read) is not answering yet.
      if ((await onConnectionTo(port, (redis) => redis.ping())) === "PONG") return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`redis-server on port ${port} did not answer within 10 s`);
}

/** One command to a server by its port, on a connection of its own. */
export function redisAt(port: number, ...command: (string | number)[]): Promise<unknown> {
  return onConnectionTo(port, (redis) => redis.call(String(command[0]), ...command.slice(1)));
}

/**
 * `use` on a connection of its own to the server at `port`, closed after: no retry, no
 * reconnection, so a server that is down fails at once (to be asked again by the caller).
 */
export async function onConnectionTo<T>(
  port: number,
  use: (redis: Redis) => Promise<T>,
): Promise<T> {
  const redis = new Redis(port, "127.0.0.1", {
    maxRetriesPerRequest: 0,
    lazyConnect: true,
    retryStrategy: () => null,
    connectTimeout: 2000,
    commandTimeout: 5000,
  });
  redis.on("error", () => {});
  try {
    await redis.connect();
    return await use(redis);
  } finally {
    redis.disconnect();
  }
}

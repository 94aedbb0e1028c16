import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { Redis } from "ioredis";
import { freePort } from "../free-port.js";

/** A redis-server of the demo's own, on a free port, keeping its data (AOF) under `dir`. */
export interface PrivateRedis {
  url: string;
  stop(): Promise<void>;
}

export function redisServerInstalled(): boolean {
  return spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status === 0;
}

/**
 * Starts redis-server bound to 127.0.0.1 on a free port. The append-only file keeps the
 * campaign ledger between demo runs, so a second run finds every row already known.
 */
export async function startPrivateRedis(dir: string): Promise<PrivateRedis> {
  await mkdir(dir, { recursive: true });
  const port = await freePort();
  const child: ChildProcess = spawn(
    "redis-server",
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--dir",
      dir,
      "--save",
      "",
      "--appendonly",
      "yes",
      "--protected-mode",
      "yes",
    ],
    { stdio: "ignore" },
  );
  const url = `redis://127.0.0.1:${port}`;
  await waitUntilAnswering(url, child);
  return {
    url,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

async function waitUntilAnswering(url: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 50; i++) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode}`);
    const redis = new Redis(url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    redis.on("error", () => {});
    try {
      await redis.connect();
      await redis.ping();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    } finally {
      redis.disconnect();
    }
  }
  throw new Error("redis-server did not answer within 5 s");
}

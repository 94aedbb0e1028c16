import type { ClusterSeed } from "../config.js";
import { connectNode, describeRedis, type RedisSettings } from "../redis/connection.js";

/** One Redis node as the doctor saw it. */
export interface NodeReport {
  address: string;
  /** Master (or the one Redis), else a replica. */
  master: boolean;
  /** Why it did not answer; undefined when it did. */
  error?: string;
  /** INFO fields (memory, persistence, cluster) when it answered. */
  info?: Record<string, string>;
}

export interface RedisReport {
  /** The nodes: the one Redis, or every node the cluster knows (failed ones included). */
  nodes: NodeReport[];
  /** Cluster mode: the cluster's own state (`cluster_state`), or why it is unknown. */
  clusterState?: string;
  /** Cluster mode: the master serving the prefix's slot. */
  slotOwner?: string;
  /** Set when not one node could be asked. */
  unreachable?: string;
}

const PROBE_MS = 3000;

/** Asks every node of the configured Redis (one, or each node of the cluster) about itself. */
export async function inspectRedis(settings: RedisSettings, prefix: string): Promise<RedisReport> {
  if (!settings.redisClusterNodes) {
    const node = await inspectNode(settings, undefined, redisAddress(settings.redisUrl));
    if (node.error) return { nodes: [], unreachable: `${describeRedis(settings)}: ${node.error}` };
    return { nodes: [node] };
  }
  return inspectCluster(settings, settings.redisClusterNodes, prefix);
}

function redisAddress(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || 6379}`;
}

async function inspectCluster(
  settings: RedisSettings,
  seeds: ClusterSeed[],
  prefix: string,
): Promise<RedisReport> {
  let lastError = "no seed node";
  for (const seed of seeds) {
    const redis = connectNode(settings, seed);
    redis.on("error", () => {});
    try {
      await withTimeout(redis.connect());
      const nodesText = String(await withTimeout(redis.call("CLUSTER", "NODES")));
      const info = String(await withTimeout(redis.call("CLUSTER", "INFO")));
      const slot = Number(await withTimeout(redis.call("CLUSTER", "KEYSLOT", prefix)));
      const known = parseClusterNodes(nodesText, slot);
      const nodes = await Promise.all(
        known.map(async (k) =>
          k.failing
            ? { address: k.address, master: k.master, error: "marked failing by the cluster" }
            : { ...(await inspectNode(settings, k.seed, k.address)), master: k.master },
        ),
      );
      return {
        nodes,
        clusterState: /cluster_state:(\w+)/.exec(info)?.[1] ?? "unknown",
        slotOwner: known.find((k) => k.ownsSlot)?.address,
      };
    } catch (error) {
      lastError = `${seed.host}:${seed.port}: ${(error as Error).message}`;
    } finally {
      redis.disconnect();
    }
  }
  return { nodes: [], unreachable: `${describeRedis(settings)}: ${lastError}` };
}

interface KnownNode {
  address: string;
  seed: ClusterSeed;
  master: boolean;
  failing: boolean;
  ownsSlot: boolean;
}

/** CLUSTER NODES lines: `id host:port@bus flags master-id ping pong epoch link slots...`. */
function parseClusterNodes(text: string, slot: number): KnownNode[] {
  return text
    .trim()
    .split("\n")
    .map((line) => {
      const [, addressField = "", flags = "", , , , , , ...slots] = line.trim().split(" ");
      const address = addressField.split("@")[0]!.split(",")[0]!;
      const at = address.lastIndexOf(":");
      const flagList = flags.split(",");
      return {
        address,
        seed: { host: address.slice(0, at), port: Number(address.slice(at + 1)) },
        master: flagList.includes("master"),
        failing: flagList.some((f) => f === "fail" || f === "fail?" || f === "noaddr"),
        ownsSlot: slots.some((range) => inRange(range, slot)),
      };
    });
}

function inRange(range: string, slot: number): boolean {
  if (range.startsWith("[")) return false; // a slot being migrated
  const [from, to = from] = range.split("-").map(Number);
  return slot >= from! && slot <= to!;
}

async function inspectNode(
  settings: RedisSettings,
  seed: ClusterSeed | undefined,
  address: string,
): Promise<NodeReport> {
  const redis = connectNode(settings, seed);
  redis.on("error", () => {});
  try {
    await withTimeout(redis.connect());
    const text = String(await withTimeout(redis.info()));
    return { address, master: !/role:slave/.test(text), info: infoFields(text) };
  } catch (error) {
    return { address, master: true, error: (error as Error).message || "no answer" };
  } finally {
    redis.disconnect();
  }
}

function infoFields(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of text.split("\r\n")) {
    const at = line.indexOf(":");
    if (at > 0 && !line.startsWith("#")) fields[line.slice(0, at)] = line.slice(at + 1);
  }
  return fields;
}

function withTimeout<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${PROBE_MS / 1000} s`)),
        PROBE_MS,
      );
    }),
  ]).finally(() => clearTimeout(timer));
}

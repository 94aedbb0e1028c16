// A Redis Cluster of the test's own: 3 masters and 3 replicas (Debian's redis-server), each on a
// free loopback port in a folder of its own, made with `redis-cli --cluster create`.
import { spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cleanUpLater } from "./cleanup.js";
import { freePort } from "./free-port.js";
import { type RedisServer, redisAt, startRedisServer } from "./redis-server.js";
import { removeDir } from "./tmp-dir.js";
import { eventually } from "./wait-for.js";

export interface RedisCluster {
  nodes: RedisServer[];
  /** `127.0.0.1:P1,127.0.0.1:P2,...` of `nodes`, for GIFTJOBS_REDIS_CLUSTER_NODES. */
  seeds(nodes?: RedisServer[]): string;
  /** The master now serving the slot of `key`, and its replicas (running ones). */
  slotOwner(key: string): Promise<{ master: RedisServer; replicas: RedisServer[] }>;
  /** Until every running node says `cluster_state:ok` and agrees on the master of `key`. */
  settled(key?: string): Promise<void>;
}

/** How long a node may be silent before its replica takes over (short: tests wait for it). */
const NODE_TIMEOUT_MS = 2000;

/**
 * Starts the six servers, makes the cluster and waits until it serves every slot and each
 * master's replica is ready to take over.
 */
export async function startRedisCluster(): Promise<RedisCluster> {
  // Removed after the servers are killed (clean-ups run in the order they were asked for).
  const root = await mkdtemp(join(tmpdir(), "gj-cluster-"));
  const nodes: RedisServer[] = [];
  for (let i = 0; i < 6; i++) {
    nodes.push(
      await startRedisServer({
        dir: join(root, String(i)),
        port: await freePort(10_000),
        args: [
          "--cluster-enabled",
          "yes",
          "--cluster-config-file",
          "nodes.conf",
          "--cluster-node-timeout",
          String(NODE_TIMEOUT_MS),
          // A replica may take over however long ago it last heard from its master: the
          // masters here are killed at any moment, idle replicas included.
          "--cluster-replica-validity-factor",
          "0",
          // A replica is listed in CLUSTER SLOTS (and so found by slotOwner) only once it has
          // synced and its replication offset is not 0: its master sends the copy at once (not
          // 5 s later, in case more replicas come) and pings it every second (not every 10),
          // which moves the offset of a master nothing was written to.
          "--repl-diskless-sync-delay",
          "0",
          "--repl-ping-replica-period",
          "1",
          "--appendonly",
          "yes",
          "--logfile",
          "redis.log",
        ],
      }).catch(async (error) => {
        for (const node of nodes) await node.kill();
        throw error;
      }),
    );
  }
  cleanUpLater(() => removeDir(root));
  await createCluster(nodes.map((n) => n.address));
  const cluster: RedisCluster = {
    nodes,
    seeds: (some = nodes) => some.map((n) => n.address).join(","),
    slotOwner: (key) => slotOwner(nodes, key),
    settled: (key) => settled(nodes, key),
  };
  await cluster.settled();
  await replicasListed(nodes);
  return cluster;
}

/** Until CLUSTER SLOTS lists a replica beside each master (a test asks one to fail over). */
async function replicasListed(nodes: RedisServer[]): Promise<void> {
  await eventually(
    async () => {
      const ranges = (await redisAt(nodes[0]!.port, "CLUSTER", "SLOTS")) as unknown[][];
      // Each range: from, to, the master, then its replicas.
      return ranges.every((range) => range.length > 3);
    },
    "each master's replica to be listed in CLUSTER SLOTS",
    60_000,
  );
}

function createCluster(addresses: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const cli = spawn(
      "redis-cli",
      ["--cluster", "create", ...addresses, "--cluster-replicas", "1", "--cluster-yes"],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    cli.stdout.on("data", (d) => {
      output += d;
    });
    cli.stderr.on("data", (d) => {
      output += d;
    });
    cli.on("error", reject);
    cli.on("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`redis-cli --cluster create: ${output}`)),
    );
  });
}

function running(nodes: RedisServer[]): RedisServer[] {
  return nodes.filter((n) => n.child() !== undefined);
}

interface NodeLine {
  address: string;
  flags: string[];
  masterId: string;
  id: string;
  connected: boolean;
}

/** CLUSTER NODES as one running node sees it. */
async function clusterNodes(node: RedisServer): Promise<NodeLine[]> {
  const text = String(await redisAt(node.port, "CLUSTER", "NODES"));
  return text
    .trim()
    .split("\n")
    .map((line) => {
      const [id, address, flags, masterId, , , , link] = line.split(" ");
      return {
        id: id!,
        address: address!.split("@")[0]!,
        flags: flags!.split(","),
        masterId: masterId!,
        connected: link === "connected",
      };
    });
}

async function slotOwner(
  nodes: RedisServer[],
  key: string,
): Promise<{ master: RedisServer; replicas: RedisServer[] }> {
  const alive = running(nodes);
  const slot = Number(await redisAt(alive[0]!.port, "CLUSTER", "KEYSLOT", key));
  // Each range: [from, to, [host, port, id] of the master, then one such per replica].
  const ranges = (await redisAt(alive[0]!.port, "CLUSTER", "SLOTS")) as [
    number,
    number,
    ...[string, number, string][],
  ][];
  const range = ranges.find(([from, to]) => slot >= from && slot <= to);
  if (!range) throw new Error(`no node serves slot ${slot}`);
  const [, , ...servers] = range;
  const [[, masterPort] = ["", 0], ...replicaEntries] = servers;
  const byPort = (port: number) => nodes.find((n) => n.port === port);
  const master = byPort(masterPort);
  if (!master) throw new Error(`slot ${slot} is served by an unknown node ${masterPort}`);
  const replicas = replicaEntries
    .map(([, port]) => byPort(port))
    .filter((n): n is RedisServer => n !== undefined && n.child() !== undefined);
  return { master, replicas };
}

async function settled(nodes: RedisServer[], key?: string): Promise<void> {
  await eventually(
    async () => {
      const alive = running(nodes);
      for (const node of alive) {
        const info = String(await redisAt(node.port, "CLUSTER", "INFO").catch(() => ""));
        if (!info.includes("cluster_state:ok")) return false;
        // Every running node knows every other running node as connected and not failing.
        const seen = await clusterNodes(node).catch(() => []);
        for (const other of alive) {
          const line = seen.find((l) => l.address === other.address);
          if (!line || line.flags.some((f) => f === "fail" || f === "fail?")) return false;
        }
      }
      if (key === undefined) return true;
      const owners = await Promise.all(
        alive.map(async (node) => {
          const slot = Number(await redisAt(node.port, "CLUSTER", "KEYSLOT", key));
          const ranges = (await redisAt(node.port, "CLUSTER", "SLOTS")) as [
            number,
            number,
            [string, number],
          ][];
          return ranges.find(([from, to]) => slot >= from && slot <= to)?.[2][1];
        }),
      );
      return owners.every((port) => port !== undefined && port === owners[0]);
    },
    "the Redis Cluster to settle (cluster_state:ok on every node)",
    60_000,
  );
}

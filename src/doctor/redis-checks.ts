import { grouped } from "../grouped.js";
import { type DoctorCheck, failed, passed } from "./doctor-check.js";
import type { NodeReport, RedisReport } from "./redis-nodes.js";

/**
 * Redis memory a campaign row takes at one row per order (bench campaigns (a): 485;
 * docs/operations.md, "Running in production").
 */
const BYTES_PER_ROW = 500;
/** Past this share of maxmemory, the doctor says to make room. */
const MEMORY_LIMIT_SHARE = 0.8;

/** What production needs of Redis, one check each: reachable, no eviction, persistence, memory. */
export function redisChecks(report: RedisReport): DoctorCheck[] {
  if (report.unreachable) {
    const why = `Redis does not answer at ${report.unreachable}`;
    return [
      failed("redis", `${why}: start it, or fix GIFTJOBS_REDIS_URL / GIFTJOBS_REDIS_CLUSTER_NODES`),
      failed("eviction", "not checked: Redis does not answer"),
      failed("persistence", "not checked: Redis does not answer"),
      failed("memory", "not checked: Redis does not answer"),
    ];
  }
  const answering = report.nodes.filter((n) => n.info);
  return [
    reachable(report),
    eviction(answering),
    persistence(answering),
    memory(report, answering),
  ];
}

function reachable(report: RedisReport): DoctorCheck {
  const silent = report.nodes.filter((n) => n.error);
  if (report.clusterState === undefined) {
    return passed("redis", `Redis answers at ${report.nodes[0]!.address}`);
  }
  if (silent.length > 0) {
    const list = silent.map((n) => `${n.address} (${n.error})`).join(", ");
    return failed(
      "redis",
      `${silent.length} of ${report.nodes.length} cluster nodes do not answer: ${list}; start them, or remove them from the cluster (CLUSTER FORGET)`,
    );
  }
  if (report.clusterState !== "ok") {
    return failed(
      "redis",
      `the cluster's state is ${report.clusterState}: some slots have no master`,
    );
  }
  const masters = report.nodes.filter((n) => n.master).length;
  return passed(
    "redis",
    `all ${report.nodes.length} cluster nodes answer (${masters} masters); the prefix's slot is on ${report.slotOwner ?? "an unknown node"}`,
  );
}

function eviction(nodes: NodeReport[]): DoctorCheck {
  const wrong = nodes.filter((n) => n.info?.maxmemory_policy !== "noeviction");
  if (wrong.length === 0) return passed("eviction", "maxmemory-policy is noeviction");
  const list = wrong.map((n) => `${n.address} (${n.info?.maxmemory_policy ?? "unknown"})`);
  return failed(
    "eviction",
    `maxmemory-policy is not noeviction on ${list.join(", ")}: an evicted ledger key is a forgotten payment; set maxmemory-policy noeviction`,
  );
}

function persistence(nodes: NodeReport[]): DoctorCheck {
  const off = nodes.filter((n) => n.info?.aof_enabled !== "1");
  if (off.length === 0) return passed("persistence", "appendonly is on");
  return failed(
    "persistence",
    `appendonly is off on ${off.map((n) => n.address).join(", ")}: a restart would forget the ledger; set appendonly yes (appendfsync everysec)`,
  );
}

/** The node that holds giftjobs' keys: the one Redis, or the master of the prefix's slot. */
function memory(report: RedisReport, nodes: NodeReport[]): DoctorCheck {
  const holder = report.slotOwner ? nodes.find((n) => n.address === report.slotOwner) : nodes[0];
  if (!holder?.info)
    return failed("memory", "not checked: the node holding the prefix does not answer");
  const used = Number(holder.info.used_memory ?? 0);
  const max = Number(holder.info.maxmemory ?? 0);
  if (!max) {
    return passed(
      "memory",
      `${mb(used)} used on ${holder.address}, no maxmemory set: Redis may take all the machine's memory`,
    );
  }
  const share = used / max;
  const room = Math.max(0, Math.floor((max * MEMORY_LIMIT_SHARE - used) / BYTES_PER_ROW));
  const line = `${mb(used)} of maxmemory ${mb(max)} used on ${holder.address} (${Math.round(share * 100)}%)`;
  if (share > MEMORY_LIMIT_SHARE) {
    return failed(
      "memory",
      `${line}: over ${MEMORY_LIMIT_SHARE * 100}%; raise maxmemory or archive finished campaigns (orders archive)`,
    );
  }
  return passed("memory", `${line}: room for about ${grouped(room)} more rows`);
}

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

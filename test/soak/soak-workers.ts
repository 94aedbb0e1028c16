// The soak sequence's order workers: in-process ones, restarted when their settings change
// (API key, version, timeout), and now and then a worker in a child process SIGKILLed mid-attempt.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { bundleCli } from "../../scripts/cli-bundle.mjs";
import type { RunningWorkers } from "../../src/worker/worker-options.js";
import { type CampaignEnv, runWorkers } from "../helpers/campaign-env.js";
import type { Trace } from "./trace.js";
import { NORMAL_TIMEOUT_MS, SOAK_WORKERS } from "./worker-options.js";

const CHILD = fileURLToPath(new URL("./worker-child.ts", import.meta.url));
// By path, not by name, as test/helpers/cli.ts does.
const TSX = new URL("../../node_modules/tsx/dist/loader.mjs", import.meta.url).href;
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

let compiledChild: Promise<string[]> | undefined;

/**
 * How a child worker is run: worker-child.ts bundled by esbuild once per process, as the CLI the
 * tests spawn is (test/helpers/cli-build.ts). Under tsx a child took 2.2 s to load, bundled
 * 0.7 s (2026-11-28, load average 10), and a seed with a killed or frozen worker waits for it.
 * Inside node_modules, so the packages left out of the bundle resolve; one folder per process,
 * removed as it exits, so a soak and a test run side by side do not build over each other.
 * GIFTJOBS_TEST_CLI=tsx runs the child under tsx, as it does the CLI.
 */
function childArgs(): Promise<string[]> {
  if (process.env.GIFTJOBS_TEST_CLI === "tsx") return Promise.resolve(["--import", TSX, CHILD]);
  compiledChild ??= (async () => {
    const outdir = join(ROOT, "node_modules", ".cache", `giftjobs-soak-child-${process.pid}`);
    process.once("exit", () => rmSync(outdir, { recursive: true, force: true }));
    await bundleCli({ name: "worker-child", entry: CHILD, outdir, outExtension: ".mjs" });
    return [join(outdir, "worker-child.mjs")];
  })();
  return compiledChild;
}

/** What a worker is configured with, which the sequence changes. */
export interface WorkerSettings {
  apiKey: string;
  /** X-Api-Version; undefined: none sent (the account's). */
  apiVersion: string | undefined;
  timeoutMs: number;
}

/** What the campaigns' rows are doing, as the child worker waits for an attempt to catch. */
export type Sending = "in flight" | "nothing ahead" | "waiting";

/** The harness could not do its part (a child worker that would not start): not a finding. */
export class HarnessError extends Error {
  override readonly name = "HarnessError";
}

/** The lines of a child's stderr that say what went wrong, on one line. */
function gist(stderr: string): string {
  const lines = stderr.trim().split("\n");
  const telling = lines.filter((line) => /Error|code:|url:/.test(line));
  return (telling.length > 0 ? telling : lines).slice(-3).join(" ").replace(/\s+/g, " ");
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export class SoakWorkers {
  settings: WorkerSettings;
  private running: RunningWorkers | undefined;
  /** Until the plan lets them start, the in-process workers stay stopped (see release). */
  private held = true;
  private readonly children = new Set<ChildProcess>();

  /**
   * @param webhookPollMs with webhooks on: the first poll of an accepted order, after which
   * polling is the net (docs/architecture/webhooks.md, "Webhooks"); undefined: webhooks off.
   */
  constructor(
    private readonly env: CampaignEnv,
    private readonly trace: Trace,
    private readonly webhookPollMs?: number,
  ) {
    this.settings = {
      apiKey: env.config.apiKey ?? "",
      apiVersion: undefined,
      timeoutMs: NORMAL_TIMEOUT_MS,
    };
  }

  private config() {
    const { apiKey, apiVersion, timeoutMs } = this.settings;
    return { ...this.env.config, apiKey, apiVersion, requestTimeoutMs: timeoutMs };
  }

  private settingsText(): string {
    const { apiKey, apiVersion, timeoutMs } = this.settings;
    return `key ${apiKey}, version ${apiVersion ?? "(none)"}, timeout ${timeoutMs} ms`;
  }

  /** The in-process workers may run from now on; they start. */
  async release(): Promise<void> {
    this.held = false;
    await this.start();
  }

  /** Starts the in-process workers, unless they run already or are still held. */
  async start(): Promise<void> {
    if (this.running || this.held) return;
    const webhooks =
      this.webhookPollMs === undefined ? undefined : { firstPollDelayMs: this.webhookPollMs };
    this.running = await runWorkers(this.env, { config: this.config(), ...SOAK_WORKERS, webhooks });
    this.trace.note(`workers started: ${this.settingsText()}`);
  }

  async stop(): Promise<void> {
    const running = this.running;
    this.running = undefined;
    await running?.close();
  }

  /** Stops the workers and starts them again with `change` applied (a redeploy). */
  async restart(change: Partial<WorkerSettings>): Promise<void> {
    await this.stop();
    this.settings = { ...this.settings, ...change };
    await this.start();
  }

  private childEnv(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {};
    for (const [name, value] of Object.entries(process.env))
      if (!name.startsWith("GIFTJOBS_")) env[name] = value;
    const config = this.config();
    Object.assign(env, {
      GIFTJOBS_API_URL: config.apiUrl,
      GIFTJOBS_API_KEY: config.apiKey,
      GIFTJOBS_REDIS_URL: config.redisUrl,
      GIFTJOBS_PREFIX: config.prefix,
      GIFTJOBS_DATA_DIR: config.dataDir,
      GIFTJOBS_REQUEST_TIMEOUT_MS: String(config.requestTimeoutMs),
      GIFTJOBS_ORDER_RATE_LIMIT: String(config.orderRateLimitPerMinute),
      GIFTJOBS_LOG_LEVEL: "silent",
    });
    if (config.apiVersion) env.GIFTJOBS_API_VERSION = config.apiVersion;
    if (this.webhookPollMs !== undefined) env.SOAK_WEBHOOK_POLL_MS = String(this.webhookPollMs);
    return env;
  }

  private async spawnChild(): Promise<ChildProcess> {
    const child = spawn(process.execPath, await childArgs(), {
      env: this.childEnv(),
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.children.add(child);
    child.once("exit", () => this.children.delete(child));
    let stderr = "";
    child.stderr?.on("data", (data) => {
      stderr += data;
    });
    const ready = new Promise<void>((resolve, reject) => {
      child.stdout?.on("data", (data) => {
        if (String(data).includes("ready")) resolve();
      });
      child.once("exit", (code) =>
        reject(new HarnessError(`worker child exited (${code}) before ready: ${gist(stderr)}`)),
      );
    });
    // Whichever loses the race must not reject unobserved later.
    ready.catch(() => {});
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new HarnessError("worker child not ready within 20 s")),
        20_000,
      );
    });
    try {
      await Promise.race([ready, timeout]);
    } finally {
      clearTimeout(timer);
    }
    return child;
  }

  /**
   * The in-process workers stop and a worker in a child process takes over; resolves `afterMs`
   * after an order of the campaign went in flight (or 2 s after the child was ready without one,
   * or at once when no row is left to send: nothing can go in flight then, and the 2 s were
   * most of such a seed's time).
   */
  private async childMidAttempt(
    afterMs: number,
    look: () => Promise<Sending>,
  ): Promise<ChildProcess> {
    await this.stop();
    const child = await this.spawnChild().catch(async (error: unknown) => {
      // Once more, a second later: node_modules may be in the middle of a reinstall.
      this.trace.note(`worker child failed (${(error as Error).message}); once more`);
      await sleep(1000);
      return this.spawnChild();
    });
    this.trace.note(`worker child ${child.pid} ready`);
    const deadline = Date.now() + 2000;
    for (;;) {
      const now = await look();
      if (now === "nothing ahead") this.trace.note("no row left to send: no attempt to catch");
      if (now !== "waiting" || Date.now() >= deadline) break;
      await sleep(5);
    }
    await sleep(afterMs);
    return child;
  }

  /**
   * A worker in a child process is SIGKILLed mid-attempt; the in-process workers start again
   * and take its job over once its lock runs out.
   */
  async killOne(afterMs: number, look: () => Promise<Sending>): Promise<void> {
    const child = await this.childMidAttempt(afterMs, look);
    const exited = once(child, "exit");
    child.kill("SIGKILL");
    await exited;
    this.trace.note(`worker child ${child.pid} SIGKILLed`);
    await this.start();
  }

  /**
   * A worker in a child process is frozen (SIGSTOP) mid-attempt for `freezeMs`, longer than a
   * job's lock: the in-process workers start again and take its job over, sending the same key.
   * Then it goes on (SIGCONT) with what it was doing, beside them, with the settings it was
   * started with, until the campaign is brought to rest
   * (docs/architecture/keys-and-exactly-once.md, "Exactly once": a stalled job taken over).
   */
  async freezeOne(afterMs: number, freezeMs: number, look: () => Promise<Sending>): Promise<void> {
    const child = await this.childMidAttempt(afterMs, look);
    child.kill("SIGSTOP");
    this.trace.note(`worker child ${child.pid} frozen`);
    await this.start();
    await sleep(freezeMs);
    child.kill("SIGCONT");
    this.trace.note(`worker child ${child.pid} goes on`);
  }

  /** Stops the child workers still running as workers do on SIGTERM; SIGKILL after 5 s. */
  async stopChildren(): Promise<void> {
    await Promise.all(
      [...this.children].map(async (child) => {
        const exited = once(child, "exit");
        child.kill("SIGCONT");
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
        await exited;
        clearTimeout(timer);
        this.trace.note(`worker child ${child.pid} stopped`);
      }),
    );
  }

  async close(): Promise<void> {
    for (const child of this.children) {
      child.kill("SIGCONT");
      child.kill("SIGKILL");
    }
    await this.stop();
  }
}

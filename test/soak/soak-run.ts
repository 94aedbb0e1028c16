// Runs one seed's plan (scenario.ts) against a real sandbox, Redis and workers, brings the
// campaign to rest and checks it against the sandbox's own orders (check.ts). Issue 31.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ApiClient } from "../../src/api/client.js";
import { UnauthorizedError } from "../../src/api/errors/index.js";
import { cancelCampaign, pauseCampaign, resumeCampaign } from "../../src/campaigns/control.js";
import { REPORT_COLUMNS, reportRecords } from "../../src/campaigns/report.js";
import { retryCampaign } from "../../src/campaigns/retry.js";
import { campaignStatus, pendingRows } from "../../src/campaigns/status.js";
import { RunError } from "../../src/errors/run-error.js";
import { UserError } from "../../src/errors/user-error.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { pickSampleProducts, sampleCsv } from "../../src/import/sample-csv.js";
import { ROW_STATUSES } from "../../src/ledger/row-status.js";
import { apiKeyId } from "../../src/sandbox/index.js";
import { fileStores } from "../../src/stores/file-stores.js";
import { startWebhookReceiver } from "../../src/webhooks/webhook-receiver.js";
import { type CampaignEnv, campaignEnv, quietLog } from "../helpers/campaign-env.js";
import { loseKeys, testRedis } from "../helpers/redis.js";
import { control, sandboxOrders } from "../helpers/sandbox.js";
import { newWebhookSecret } from "../helpers/webhook-inbox.js";
import {
  checkCounts,
  checkInvariants,
  type ReportedRow,
  type ServiceOrder,
  type Violation,
} from "./check.js";
import { eventText, OTHER_CAMPAIGN, type Scenario, type SoakEvent } from "./scenario.js";
import { HarnessError, type Sending, SoakWorkers } from "./soak-workers.js";
import { Trace } from "./trace.js";
import { NORMAL_TIMEOUT_MS, SHORT_TIMEOUT_MS, SLOW_LATENCY_MS } from "./worker-options.js";

const CAMPAIGN = "soak";
/** An API version the service has removed: 410 version_removed, before the key is read. */
const REMOVED_VERSION = "2023-07-27";
/** The sandbox's order rate limit while the fault is off: never reached. */
const OPEN_RATE = 100_000;
const TOP_UP = "1000000";
/** How long the campaign may take to come to rest once every fault is off. */
const REST_MS = 30_000;
/** With webhooks on, the first poll of an accepted order: later than most webhooks come. */
const WEBHOOK_POLL_MS = 300;

export interface SoakResult {
  scenario: Scenario;
  /** The API keys' names (A0, the first; A1 after the first rotation...) by api_key_id. */
  apiKeys: Map<string, string>;
  violations: Violation[];
  rows: ReportedRow[];
  orders: ServiceOrder[];
  /** The ledger's orders at rest, one line each. */
  ledgerOrders: string[];
  trace: Trace;
  ms: number;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Row N of the file is sent to recipient-00000N@seedS.example.com (sampleCsv's addresses). */
function rowOfEmail(email: string): number {
  return Number(/^recipient-(\d+)@/.exec(email)?.[1] ?? 0);
}

/** An order's stored JSON without its key and identities (shown apart), long texts cut. */
function storedText(json: string | undefined): string {
  if (!json) return "";
  const fields = JSON.parse(json) as Record<string, unknown>;
  delete fields.k;
  delete fields.i;
  for (const [name, value] of Object.entries(fields))
    if (typeof value === "string" && value.length > 60) fields[name] = `${value.slice(0, 57)}...`;
  return JSON.stringify(fields);
}

class SoakRun {
  readonly violations: Violation[] = [];
  /** Recipients a `retry --new-key --include-uncertain` moved to a new key: they may be paid twice. */
  private readonly forced = new Set<string>();
  private readonly refused = new Set<number>();
  private readonly workers: SoakWorkers;
  private file = "";
  /** The campaigns recorded: the first, and the same file's second import when it was recorded. */
  private readonly campaigns: string[] = [];
  private currency = "";
  private emails: string[] = [];
  /** The key the service accepts now. */
  private serviceKey: string;
  private rotations = 0;
  /** Every API key of the sequence, named A0, A1, ... by api_key_id. */
  readonly apiKeys = new Map<string, string>();

  constructor(
    private readonly scenario: Scenario,
    private readonly env: CampaignEnv,
    readonly trace: Trace,
  ) {
    const poll = scenario.webhooks ? WEBHOOK_POLL_MS : undefined;
    this.workers = new SoakWorkers(env, this.trace, poll);
    this.serviceKey = env.config.apiKey ?? "";
    this.apiKeys.set(apiKeyId(this.serviceKey), "A0");
    env.sandbox.setApiKey(this.serviceKey);
  }

  async writeCsv(): Promise<void> {
    const { rows, seed } = this.scenario;
    const text = sampleCsv(this.env.index, {
      rows,
      products: 2,
      domain: `seed${seed}.example.com`,
    });
    this.currency = pickSampleProducts(this.env.index, 2)[0]?.currency ?? "USD";
    this.emails = text
      .trimEnd()
      .split("\n")
      .slice(1)
      .map((line) => line.split(",")[0] ?? "");
    this.file = join(this.env.dataDir, "soak.csv");
    await writeFile(this.file, text);
  }

  async importFile(what: string, campaign = CAMPAIGN, allowRepeats = false): Promise<void> {
    try {
      await this.importWith(this.workers.settings.apiKey, what, campaign, allowRepeats);
    } catch (error) {
      // The service refuses the workers' key (rotated): the import stops, saying so, and the
      // operator runs it again with the key the service takes now.
      if (!(error instanceof RunError && error.cause instanceof UnauthorizedError)) throw error;
      this.trace.note(`${what} ${campaign} refused the workers' key; again with the service's`);
      await this.importWith(this.serviceKey, what, campaign, allowRepeats);
    }
  }

  private async importWith(
    apiKey: string | undefined,
    what: string,
    campaign: string,
    allowRepeats: boolean,
  ): Promise<void> {
    const { mode, itemsPerOrder, attempts, backoffMs } = this.scenario;
    const result = await importCampaign(
      {
        file: this.file,
        campaign,
        executionMode: mode,
        itemsPerOrder: mode === "async" ? itemsPerOrder : 1,
        jobOptions: { attempts, backoff: { type: "fixed", delay: backoffMs } },
        balanceCheck: false,
        // A re-import after a lost ledger names a campaign the journal and paid memory know.
        append: what !== "import",
        allowRepeats,
      },
      {
        ledger: this.env.ledger,
        catalog: this.env.index,
        log: quietLog,
        stores: fileStores(this.env.dataDir),
        // As `orders import` does: a client with its key, which the journal names.
        client: new ApiClient({ baseUrl: this.env.sandbox.url, apiKey }),
      },
    );
    if (!this.campaigns.includes(campaign)) this.campaigns.push(campaign);
    const repeats = result.repeats ? ` (repeats: ${JSON.stringify(result.repeats)})` : "";
    this.trace.note(
      `${what} ${campaign}: ${result.enqueued} rows in ${result.orders} orders recorded${repeats}`,
    );
  }

  /**
   * Issue 35: the same file as another campaign. Without --allow-repeats it is refused while a
   * row of the first may be paid; with it every person may be paid once more, as the operator
   * said (its rows join those --include-uncertain touched).
   */
  private async importOther(allowRepeats: boolean): Promise<void> {
    const what = `import as ${OTHER_CAMPAIGN}${allowRepeats ? " --allow-repeats" : ""}`;
    await this.attempt(what, async () => {
      await this.importFile("import", OTHER_CAMPAIGN, allowRepeats);
      if (allowRepeats) for (const email of this.emails) this.forced.add(email);
    });
  }

  /** The whole sequence, then rest; a failure of its own is a violation, not a crash. */
  async runAll(): Promise<void> {
    await this.attempt("sequence", () => this.run());
  }

  private async run(): Promise<void> {
    await this.writeCsv();
    await this.importFile("import");
    // The first events come before anything is sent (but a killed worker's own sends).
    for (const [i, step] of this.scenario.steps.entries()) {
      this.trace.note(`EVENT ${eventText(step.event)}`);
      await this.attempt(eventText(step.event), () => this.apply(step.event));
      if (i + 1 >= this.scenario.workersAfter) await this.workers.release();
      const other = this.scenario.otherImport;
      if (other && i + 1 === other.after) await this.importOther(other.allowRepeats);
      await sleep(step.waitMs);
    }
    await this.workers.release();
    await this.bringToRest();
  }

  /** Runs a step; an operator command's refusal is a note, anything else a violation. */
  private async attempt(what: string, step: () => Promise<void>): Promise<void> {
    try {
      await step();
    } catch (error) {
      if (error instanceof UserError) this.trace.note(`${what} refused: ${error.message}`);
      else if (error instanceof HarnessError) {
        this.trace.note(`${what}: HARNESS ${error.message}`);
        this.violations.push({ kind: "harness", detail: `${what}: ${error.message}` });
      } else {
        const message = (error as Error).message ?? String(error);
        this.trace.note(`${what} FAILED: ${message}`);
        this.violations.push({ kind: "step-failed", detail: `${what}: ${message}` });
      }
    }
  }

  private setFaults(faults: Parameters<CampaignEnv["sandbox"]["setFaults"]>[0]): void {
    this.env.sandbox.setFaults(faults);
  }

  private async apply(event: SoakEvent): Promise<void> {
    switch (event.kind) {
      case "timeouts":
        return this.timeouts(event.on);
      case "drops":
        return this.setFaults({ dropRate: event.rate });
      case "fail-before":
        return this.setFaults({ failRate: event.rate });
      case "fail-after":
        return this.setFaults({ failAfterRate: event.rate, failAfterStatus: event.status });
      case "rotate-key":
        return this.rotateKey(event.oldKey);
      case "fix-key":
        return this.workers.restart({ apiKey: this.serviceKey });
      case "old-version":
        return this.workers.restart({ apiVersion: REMOVED_VERSION });
      case "fix-version":
        return this.workers.restart({ apiVersion: undefined });
      case "refuse-row":
        return this.refuseRow(event.row, event.on);
      case "rate-limit":
        return this.setFaults({ orderRateLimit: event.perMinute ?? OPEN_RATE });
      case "funds":
        return this.setBalance(event.low ? "0" : TOP_UP);
      case "kill-worker":
        return this.workers.killOne(event.afterMs, () => this.sending());
      case "freeze-worker":
        return this.workers.freezeOne(event.afterMs, event.freezeMs, () => this.sending());
      case "pause":
        return this.operator("pause", () => pauseCampaign(this.env.ledger, CAMPAIGN));
      case "resume":
        return this.operator("resume", () => resumeCampaign(this.env.ledger, CAMPAIGN));
      case "cancel":
        return this.operator("cancel", () => cancelCampaign(this.env.ledger, CAMPAIGN));
      case "retry":
        return this.retry(event.newKey, event.includeUncertain);
      case "lose-ledger":
        return this.loseLedger(event.live);
    }
  }

  private async timeouts(on: boolean): Promise<void> {
    this.setFaults({ latencyMs: on ? SLOW_LATENCY_MS : this.scenario.latencyMs });
    await this.workers.restart({ timeoutMs: on ? SHORT_TIMEOUT_MS : NORMAL_TIMEOUT_MS });
  }

  /**
   * The service takes a new key now (over its control route) and answers the old one 401 or
   * 403; the workers keep the old one.
   */
  private async rotateKey(oldKey: "invalid_api_key" | "forbidden"): Promise<void> {
    this.rotations += 1;
    this.serviceKey = `soak-key-${this.rotations}`;
    this.apiKeys.set(apiKeyId(this.serviceKey), `A${this.rotations}`);
    const rotation = { api_key: this.serviceKey, old_key: oldKey };
    await control(this.env.sandbox, "/_sandbox/api-key", rotation);
  }

  private refuseRow(row: number, on: boolean): void {
    if (on) this.refused.add(row);
    else this.refused.delete(row);
    const emails = [...this.refused].map((n) => this.emails[n - 1] ?? "");
    this.setFaults({ refuseEmails: emails });
  }

  private async setBalance(amount: string): Promise<void> {
    await control(this.env.sandbox, "/_sandbox/balances", { [this.currency]: amount });
  }

  /** An order of the campaign in flight; else whether any campaign has rows left to send. */
  private async sending(): Promise<Sending> {
    if ((await this.env.ledger.campaigns.counts(CAMPAIGN)).in_flight > 0) return "in flight";
    for (const campaign of this.campaigns) {
      const counts = await this.env.ledger.campaigns.counts(campaign);
      if (counts.queued + counts.in_flight + counts.submitted > 0) return "waiting";
    }
    return "nothing ahead";
  }

  private async operator(what: string, command: () => Promise<unknown>): Promise<void> {
    this.trace.note(`${what} -> ${JSON.stringify(await command())}`);
  }

  /** Each row's order number and that order's status, by recipient. */
  private async rowOrders(): Promise<Map<string, { order: number; status: string }>> {
    const rows: [string, number][] = [];
    for await (const [, row] of this.env.ledger.orders.rows(CAMPAIGN))
      rows.push([row.email, row.order]);
    const orders = await this.env.ledger.orders.getOrders(
      CAMPAIGN,
      rows.map(([, order]) => order),
    );
    return new Map(
      rows.map(([email, order], i) => [email, { order, status: orders[i]?.status ?? "unknown" }]),
    );
  }

  /**
   * `orders retry`. With --include-uncertain, the rows it may pay twice are noted: those failed_uncertain
   * before it, and those it moved (their order changed) that were not failed_final (which it
   * moves without --include-uncertain too), in case one became failed_uncertain during the call.
   */
  private async retry(newKey: boolean, includeUncertain: boolean): Promise<void> {
    const before = includeUncertain ? await this.rowOrders() : new Map();
    const options = { newKey, includeUncertain, stores: fileStores(this.env.dataDir) };
    await this.operator("retry", () => retryCampaign(this.env.ledger, CAMPAIGN, options));
    if (!includeUncertain) return;
    const after = await this.rowOrders();
    for (const [email, was] of before) {
      const moved = after.get(email)?.order !== was.order;
      if (was.status === "failed_uncertain" || (moved && was.status !== "failed_final"))
        this.forced.add(email);
    }
    this.trace.note(`forced rows: ${[...this.forced].map(rowOfEmail).join(", ") || "none"}`);
  }

  /**
   * Every key under the prefix goes, at once, as a Redis flush would (ledger, queue, follow set), with
   * the workers stopped first or still running; the order journal on disk stays. The same file
   * is imported again (docs/architecture/keys-and-exactly-once.md, "Lost ledger").
   */
  private async loseLedger(live: boolean): Promise<void> {
    if (!live) await this.workers.stop();
    await loseKeys(this.env.redis, this.env.config.prefix);
    this.trace.note("Redis keys of the prefix deleted");
    for (const campaign of [...this.campaigns]) await this.importFile("re-import", campaign);
    await this.workers.start();
  }

  /** Faults off, the right key and version, funds; resumed until nothing has work ahead of it. */
  private async bringToRest(): Promise<void> {
    this.trace.note("REST: faults off, right key and version, funds, resume");
    this.setFaults({
      failRate: 0,
      dropRate: 0,
      failAfterRate: 0,
      refuseEmails: [],
      latencyMs: this.scenario.latencyMs,
      orderRateLimit: OPEN_RATE,
    });
    await this.setBalance(TOP_UP);
    // A worker left running with the settings it started with would never see the fixes.
    await this.workers.stopChildren();
    await this.settle();
  }

  /**
   * What an operator does next with what the sequence left: `orders retry` (same key: the
   * failed_uncertain rows), then `orders retry --new-key` without --include-uncertain (the failed_final
   * ones), each run to rest. Neither may pay a row twice (docs/architecture/sending-orders.md, "Row
   * statuses").
   */
  async followUp(): Promise<void> {
    this.trace.note("FOLLOW-UP: retry, rest, retry --new-key, rest");
    await this.attempt("retry", () => this.retry(false, false));
    await this.settle();
    await this.attempt("retry --new-key", () => this.retry(true, false));
    await this.settle();
  }

  /** Workers with the right key, version and timeout run until the campaign rests. */
  private async settle(): Promise<void> {
    await this.workers.restart({
      apiKey: this.serviceKey,
      apiVersion: undefined,
      timeoutMs: NORMAL_TIMEOUT_MS,
    });
    const rested = await this.waitForRest();
    await this.workers.stop();
    // Async orders the ledger does not follow still end on the service: wait for them too.
    await sleep(this.scenario.asyncCompleteMs + 100);
    if (!rested) {
      const status = await campaignStatus(this.env.ledger, CAMPAIGN);
      this.violations.push({
        kind: "not-at-rest",
        detail: `still working ${REST_MS / 1000} s after every fault was off: ${JSON.stringify(status)}`,
      });
    }
  }

  /** True once three looks 50 ms apart find nothing queued, in flight or submitted. */
  private async waitForRest(): Promise<boolean> {
    const deadline = Date.now() + REST_MS;
    let idle = 0;
    while (Date.now() < deadline) {
      let busy = false;
      for (const campaign of this.campaigns) {
        const status = await campaignStatus(this.env.ledger, campaign);
        if (status.paused) await this.attempt("resume", () => this.resumeAtRest(campaign));
        busy ||= pendingRows(status) > 0 || Boolean(status.paused);
      }
      idle = busy ? 0 : idle + 1;
      if (idle >= 3) return true;
      await sleep(50);
    }
    return false;
  }

  private async resumeAtRest(campaign: string): Promise<void> {
    await this.operator(`resume ${campaign}`, () => resumeCampaign(this.env.ledger, campaign));
  }

  async reportedRows(): Promise<ReportedRow[]> {
    const rows: ReportedRow[] = [];
    for (const campaign of this.campaigns) rows.push(...(await this.campaignRows(campaign)));
    return rows;
  }

  private async campaignRows(campaign: string): Promise<ReportedRow[]> {
    const at = (name: (typeof REPORT_COLUMNS)[number]) => REPORT_COLUMNS.indexOf(name);
    const rows: ReportedRow[] = [];
    for await (const cells of reportRecords(this.env.ledger, campaign)) {
      const email = cells[at("email")] ?? "";
      rows.push({
        campaign,
        row: rowOfEmail(email),
        email,
        status: cells[at("status")] ?? "",
        orderId: cells[at("order_id")] ?? "",
        key: cells[at("idempotency_key")] ?? "",
        errorType: cells[at("error_type")] ?? "",
        replayed: cells[at("replayed")] === "yes",
      });
    }
    return rows.sort((a, b) => a.row - b.row);
  }

  /**
   * The ledger's orders: number, key, generation, status, rows, last error, and the rest of the
   * record as stored (one-letter names, docs/architecture/ledger.md "Redis keys"; long texts cut).
   */
  async ledgerOrders(): Promise<string[]> {
    const rowOf = new Map<string, number>();
    for await (const [identity, row] of this.env.ledger.orders.rows(CAMPAIGN))
      rowOf.set(identity, rowOfEmail(row.email));
    const stored = await this.env.redis.hgetall(this.env.ledger.keys(CAMPAIGN).orders);
    const lines: string[] = [];
    for await (const [number, order] of this.env.ledger.orders.all(CAMPAIGN)) {
      const rows = order.identities.map((identity) => `r${rowOf.get(identity) ?? "?"}`);
      const error = order.error_type ? ` error ${order.error_type}` : "";
      lines.push(
        `#${number} ${this.trace.label(order.key)} g${order.generation} ${order.status} ${rows.join(",")}${error} ${storedText(stored[number])}`,
      );
    }
    return lines;
  }

  /** The invariants now; `when` names the moment in each violation found. */
  check(rows: ReportedRow[], orders: ServiceOrder[], when?: string): void {
    for (const violation of checkInvariants(rows, orders, this.forced))
      this.violations.push(
        when ? { ...violation, detail: `${when}: ${violation.detail}` } : violation,
      );
  }

  /** The rows as reported and the service's orders, checked; the counts against the rows. */
  async checkNow(when?: string): Promise<{ rows: ReportedRow[]; orders: ServiceOrder[] }> {
    const rows = await this.reportedRows();
    const orders = (await sandboxOrders(this.env.sandbox)) as ServiceOrder[];
    this.check(rows, orders, when);
    for (const campaign of this.campaigns) {
      const counts = await this.env.ledger.campaigns.counts(campaign);
      const own = rows.filter((row) => row.campaign === campaign);
      for (const violation of checkCounts(own, counts, ROW_STATUSES))
        this.violations.push({
          ...violation,
          detail: `${when ? `${when}: ` : ""}${campaign}: ${violation.detail}`,
        });
    }
    return { rows, orders };
  }

  close(): Promise<void> {
    return this.workers.close();
  }
}

/**
 * With the scenario's webhooks: a receiver (src/webhooks) on a free port, and the sandbox
 * sending it each async order's end with the scenario's faults (retries 50 ms apart).
 */
async function startWebhooks(scenario: Scenario, env: CampaignEnv): Promise<() => Promise<void>> {
  if (!scenario.webhooks) return async () => {};
  const redis = testRedis();
  const secret = newWebhookSecret();
  const receiver = await startWebhookReceiver({
    redis,
    prefix: env.config.prefix,
    dataDir: env.dataDir,
    secret,
    log: quietLog,
    port: 0,
  });
  await env.sandbox.setWebhooks({
    webhookUrl: receiver.url,
    webhookSecret: secret,
    webhookRetryBaseMs: 50,
    webhookFaults: scenario.webhooks,
  });
  return async () => {
    await env.sandbox.webhooks?.close();
    await receiver.close();
    await redis.quit();
  };
}

/** One seed, end to end: its own sandbox, Redis prefix and data dir, removed after. */
export async function runScenario(scenario: Scenario): Promise<SoakResult> {
  const started = Date.now();
  const trace = new Trace();
  const env = await campaignEnv(
    {
      latencyMs: scenario.latencyMs,
      asyncCompleteMs: scenario.asyncCompleteMs,
      asyncFailRate: scenario.asyncFailRate,
      orderRateLimit: OPEN_RATE,
      faultSeed: scenario.seed,
      onOrderAttempt: trace.attempt,
    },
    `soak${scenario.seed}`,
  );
  const stopWebhooks = await startWebhooks(scenario, env);
  const run = new SoakRun(scenario, env, trace);
  try {
    await run.runAll();
    let { rows, orders } = await run.checkNow();
    // A seed that failed already is shown as the sequence left it.
    if (run.violations.length === 0) {
      await run.followUp();
      ({ rows, orders } = await run.checkNow("after the follow-up retries"));
    }
    const ledgerOrders = await run.ledgerOrders();
    return {
      scenario,
      apiKeys: run.apiKeys,
      violations: run.violations,
      rows,
      orders,
      ledgerOrders,
      trace,
      ms: Date.now() - started,
    };
  } finally {
    await run.close();
    await stopWebhooks();
    await env.dispose();
  }
}

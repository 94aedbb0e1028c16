// The soak test's plan for one seed: a small campaign and a random sequence of what the service,
// the operator and the machines do to it (issue 31, "Paid once, whatever the service answers").
// The same seed always gives the same plan; what the workers do in between depends on timing.
import { chance, mulberry32, pick, type Random, randomInt } from "../../src/sandbox/prng.js";

type ExecutionMode = "sync" | "async";

/** The campaign the same file is imported into a second time (Scenario.otherImport). */
export const OTHER_CAMPAIGN = "soak-again";

/** One thing that happens to the campaign, then `waitMs` of the workers running. */
export type SoakEvent =
  | { kind: "timeouts"; on: boolean }
  | { kind: "drops"; rate: number }
  | { kind: "fail-before"; rate: number }
  | { kind: "fail-after"; rate: number; status: 500 | 504 }
  | { kind: "rotate-key"; oldKey: "invalid_api_key" | "forbidden" }
  | { kind: "fix-key" }
  | { kind: "old-version" }
  | { kind: "fix-version" }
  | { kind: "refuse-row"; row: number; on: boolean }
  | { kind: "rate-limit"; perMinute: number | null }
  | { kind: "funds"; low: boolean }
  | { kind: "kill-worker"; afterMs: number }
  | { kind: "freeze-worker"; afterMs: number; freezeMs: number }
  | { kind: "pause" }
  | { kind: "resume" }
  | { kind: "cancel" }
  | { kind: "retry"; newKey: boolean; includeUncertain: boolean }
  | { kind: "lose-ledger"; live: boolean };

interface Step {
  event: SoakEvent;
  /** How long the workers run after the event, before the next one. */
  waitMs: number;
}

export interface Scenario {
  seed: number;
  /** Rows of the campaign's file, 1 to 4; row N is sent to recipient N (see soak-run.ts). */
  rows: number;
  mode: ExecutionMode;
  /** --items-per-order (async only). */
  itemsPerOrder: number;
  /** BullMQ attempts per order job, fixed backoff between them. */
  attempts: number;
  backoffMs: number;
  /** The sandbox's latency while timeouts are off. */
  latencyMs: number;
  asyncCompleteMs: number;
  /** Share of async orders the service ends FAILED (refunded: not paid). */
  asyncFailRate: number;
  /**
   * Async only: the service pushes order ends to a receiver, with these faults (each a
   * probability), and the workers poll only as the net (docs/architecture/webhooks.md, "Webhooks").
   */
  webhooks: { duplicates: number; outOfOrder: number; drop: number } | null;
  steps: Step[];
  /**
   * The in-process workers start after this many events (1 to 3), so that the first sends meet
   * faults already on: a campaign of a few rows is otherwise paid before the second event.
   */
  workersAfter: number;
  /**
   * Issue 35: after this many events, the same file imported again as another campaign, with
   * --allow-repeats (the operator pays them again knowingly) or without (refused while a row of
   * the first may be paid); null: none.
   */
  otherImport: { after: number; allowRepeats: boolean } | null;
}

/** Which faults are on as the plan is drawn, so that each toggle draws its other side next. */
interface PlanState {
  timeouts: boolean;
  drops: boolean;
  failBefore: boolean;
  failAfter: boolean;
  /** The service's key changed and the workers still send the old one. */
  staleKey: boolean;
  oldVersion: boolean;
  refused: Set<number>;
  rateLimited: boolean;
  lowFunds: boolean;
}

type Candidate = [weight: number, draw: () => SoakEvent];

const RATES = [0.3, 0.6, 1] as const;
/** How the service answers the key a rotation replaced: 401, or 403 (kept, not allowed to order). */
const OLD_KEY_ANSWERS = ["invalid_api_key", "forbidden"] as const;

function faultToggles(random: Random, state: PlanState): Candidate[] {
  return [
    [4, () => ({ kind: "timeouts", on: !state.timeouts })],
    [4, () => ({ kind: "drops", rate: state.drops ? 0 : pick(random, RATES) })],
    [2, () => ({ kind: "fail-before", rate: state.failBefore ? 0 : pick(random, RATES) })],
    [
      4,
      () => ({
        kind: "fail-after",
        rate: state.failAfter ? 0 : pick(random, RATES),
        status: pick(random, [500, 504] as const),
      }),
    ],
    [
      2,
      () => ({ kind: "rate-limit", perMinute: state.rateLimited ? null : randomInt(random, 1, 3) }),
    ],
    [2, () => ({ kind: "funds", low: !state.lowFunds })],
  ];
}

/** An order may be made without the workers knowing: the case issue 31 is about. */
function unclear(state: PlanState): boolean {
  return state.timeouts || state.drops || state.failAfter;
}

/** Refusals made before the key is read come more often while answers are unclear. */
function accountEvents(random: Random, state: PlanState): Candidate[] {
  const refusal = unclear(state) ? 5 : 2;
  return [
    state.staleKey
      ? [3, () => ({ kind: "fix-key" })]
      : [refusal, () => ({ kind: "rotate-key", oldKey: pick(random, OLD_KEY_ANSWERS) })],
    state.oldVersion
      ? [3, () => ({ kind: "fix-version" })]
      : [refusal, () => ({ kind: "old-version" })],
  ];
}

function rowEvents(random: Random, state: PlanState, rows: number): Candidate[] {
  return [
    [
      2,
      () => {
        const row = randomInt(random, 1, rows);
        return { kind: "refuse-row", row, on: !state.refused.has(row) };
      },
    ],
  ];
}

/**
 * What operators and machines do. A lost ledger is drawn with key rotations too, where only what
 * outlives Redis can save it: the service replays per API key (src/sandbox/README.md,
 * "Idempotency"), so a re-imported order must know which API key its first sends went under
 * (docs/architecture/keys-and-exactly-once.md, "Lost ledger").
 */
function operatorEvents(random: Random): Candidate[] {
  return [
    [1.5, () => ({ kind: "kill-worker", afterMs: randomInt(random, 0, 60) })],
    [
      1,
      () => ({
        kind: "freeze-worker",
        afterMs: randomInt(random, 0, 60),
        freezeMs: randomInt(random, 1500, 2500),
      }),
    ],
    [1.5, () => ({ kind: "pause" })],
    [2.5, () => ({ kind: "resume" })],
    [0.5, () => ({ kind: "cancel" })],
    [2, () => ({ kind: "retry", newKey: false, includeUncertain: false })],
    [2, () => ({ kind: "retry", newKey: true, includeUncertain: false })],
    [1, () => ({ kind: "retry", newKey: true, includeUncertain: true })],
    [1.5, () => ({ kind: "lose-ledger", live: chance(random, 0.5) })],
  ];
}

function weighted(random: Random, candidates: Candidate[]): SoakEvent {
  const total = candidates.reduce((sum, [weight]) => sum + weight, 0);
  let at = random() * total;
  for (const [weight, draw] of candidates) {
    at -= weight;
    if (at < 0) return draw();
  }
  return (candidates[candidates.length - 1] as Candidate)[1]();
}

/** What the event leaves on, for the next draws. */
function apply(state: PlanState, event: SoakEvent): void {
  switch (event.kind) {
    case "timeouts":
      state.timeouts = event.on;
      break;
    case "drops":
      state.drops = event.rate > 0;
      break;
    case "fail-before":
      state.failBefore = event.rate > 0;
      break;
    case "fail-after":
      state.failAfter = event.rate > 0;
      break;
    case "rotate-key":
      state.staleKey = true;
      break;
    case "fix-key":
      state.staleKey = false;
      break;
    case "old-version":
      state.oldVersion = true;
      break;
    case "fix-version":
      state.oldVersion = false;
      break;
    case "refuse-row":
      if (event.on) state.refused.add(event.row);
      else state.refused.delete(event.row);
      break;
    case "rate-limit":
      state.rateLimited = event.perMinute !== null;
      break;
    case "funds":
      state.lowFunds = event.low;
      break;
    default:
      break;
  }
}

function drawSteps(random: Random, rows: number): Step[] {
  const state: PlanState = {
    timeouts: false,
    drops: false,
    failBefore: false,
    failAfter: false,
    staleKey: false,
    oldVersion: false,
    refused: new Set(),
    rateLimited: false,
    lowFunds: false,
  };
  const steps: Step[] = [];
  const count = randomInt(random, 5, 10);
  for (let i = 0; i < count; i++) {
    const event = weighted(random, [
      ...faultToggles(random, state),
      ...accountEvents(random, state),
      ...rowEvents(random, state, rows),
      ...operatorEvents(random),
    ]);
    apply(state, event);
    steps.push({ event, waitMs: randomInt(random, 20, 200) });
  }
  return steps;
}

const WEBHOOK_FAULTS = [0, 0.3, 0.6] as const;

function drawWebhooks(random: Random, mode: ExecutionMode): Scenario["webhooks"] {
  if (mode === "sync" || !chance(random, 0.4)) return null;
  return {
    duplicates: pick(random, WEBHOOK_FAULTS),
    outOfOrder: pick(random, WEBHOOK_FAULTS),
    drop: pick(random, WEBHOOK_FAULTS),
  };
}

/** The plan of `seed`: the same seed, the same plan. */
export function scenarioOf(seed: number): Scenario {
  const random = mulberry32(seed * 2654435761);
  const rows = randomInt(random, 1, 4);
  const mode: ExecutionMode = chance(random, 0.4) ? "sync" : "async";
  const packed = mode === "async" && rows > 1 && chance(random, 0.5);
  // Drawn last, so that adding it left the older plans (seeds already reported) as they were.
  const webhooks = (
    plan: Omit<Scenario, "webhooks" | "workersAfter" | "otherImport">,
  ): Scenario => ({
    ...plan,
    webhooks: drawWebhooks(random, mode),
    workersAfter: randomInt(random, 1, 3),
    otherImport: chance(random, 0.5)
      ? { after: randomInt(random, 1, plan.steps.length), allowRepeats: chance(random, 0.5) }
      : null,
  });
  return webhooks({
    seed,
    rows,
    mode,
    itemsPerOrder: packed ? randomInt(random, 2, 3) : 1,
    attempts: randomInt(random, 3, 8),
    backoffMs: randomInt(random, 20, 80),
    latencyMs: randomInt(random, 30, 80),
    asyncCompleteMs: randomInt(random, 50, 200),
    asyncFailRate: mode === "async" && chance(random, 0.3) ? 0.3 : 0,
    steps: drawSteps(random, rows),
  });
}

/** An event as the failure report prints it. */
export function eventText(event: SoakEvent): string {
  switch (event.kind) {
    case "timeouts":
      return `timeouts ${event.on ? "on" : "off"}`;
    case "drops":
    case "fail-before":
      return `${event.kind} ${event.rate || "off"}`;
    case "fail-after":
      return event.rate ? `fail-after ${event.status} ${event.rate}` : "fail-after off";
    case "refuse-row":
      return `${event.on ? "refuse" : "accept"} r${event.row}`;
    case "rate-limit":
      return event.perMinute === null ? "rate-limit off" : `rate-limit ${event.perMinute}/min`;
    case "funds":
      return event.low ? "funds low" : "top-up";
    case "kill-worker":
      return `kill-worker (+${event.afterMs} ms into an attempt)`;
    case "freeze-worker":
      return `freeze-worker ${event.freezeMs} ms (+${event.afterMs} ms into an attempt), then it goes on`;
    case "rotate-key":
      return `rotate-key (old key ${event.oldKey === "forbidden" ? "403" : "401"})`;
    case "retry":
      return `retry${event.newKey ? " --new-key" : ""}${event.includeUncertain ? " --include-uncertain" : ""}`;
    case "lose-ledger":
      return `lose-ledger${event.live ? " (workers running)" : ""}`;
    default:
      return event.kind;
  }
}

/** The campaign's shape in one line. */
export function scenarioText(s: Scenario): string {
  const packing = s.itemsPerOrder > 1 ? `, ${s.itemsPerOrder} items/order` : "";
  const failing = s.asyncFailRate ? `, async fail rate ${s.asyncFailRate}` : "";
  const hooks = s.webhooks
    ? `, webhooks (duplicates ${s.webhooks.duplicates}, out of order ${s.webhooks.outOfOrder}, drop ${s.webhooks.drop})`
    : "";
  return `${s.rows} rows, ${s.mode}${packing}, ${s.attempts} attempts (backoff ${s.backoffMs} ms), latency ${s.latencyMs} ms, async ${s.asyncCompleteMs} ms${failing}${hooks}`;
}

/** The sequence in one line: each event and the wait after it, and when the workers start. */
export function stepsText(scenario: Scenario): string {
  return scenario.steps
    .map((step, i) => {
      const start = i + 1 === scenario.workersAfter ? " | (workers start)" : "";
      const other = scenario.otherImport;
      const again =
        other && i + 1 === other.after
          ? ` | import as ${OTHER_CAMPAIGN}${other.allowRepeats ? " --allow-repeats" : ""}`
          : "";
      return `${eventText(step.event)}${start}${again} +${step.waitMs}ms`;
    })
    .join(" | ");
}

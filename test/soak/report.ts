// How a soak seed's result is printed: enough to see which path paid twice or misreported,
// and the command that replays it.
import type { ServiceOrder, Violation } from "./check.js";
import { isPaid } from "./check.js";
import { scenarioText, stepsText } from "./scenario.js";
import type { SoakResult } from "./soak-run.js";

/** The trace's lines kept in a report: its start and its end, where the rest happens. */
const TRACE_LINES = 120;

function ordersOf(result: SoakResult, email: string): ServiceOrder[] {
  return result.orders.filter((order) =>
    order.items.some((item) => item.distribution_method.email_address === email),
  );
}

function apiKeyName(result: SoakResult, order: ServiceOrder): string {
  return result.apiKeys.get(order.api_key_id ?? "") ?? "an unknown API key";
}

function orderText(result: SoakResult, order: ServiceOrder): string {
  const paid = isPaid(order) ? "" : " (refunded)";
  return `${order.id} ${result.trace.label(order.idempotency_key)} under ${apiKeyName(result, order)} ${order.status}${paid} ${order.items.length} item(s) at ${order.created_at}`;
}

/** Whether the plan had an event of `kind` before its last. */
function had(result: SoakResult, kind: string): boolean {
  return result.scenario.steps.some((step) => step.event.kind === kind);
}

/** A first guess at which path paid twice, from the row's paid orders. */
function twiceGuess(result: SoakResult, paid: ServiceOrder[]): string {
  const keys = new Set(paid.map((order) => order.idempotency_key));
  const apiKeys = new Set(paid.map((order) => apiKeyName(result, order)));
  if (keys.size < paid.length && apiKeys.size > 1) {
    const lost = had(result, "lose-ledger") ? ", across a lost ledger" : "";
    return `one idempotency key paid under ${[...apiKeys].join(" and ")} (the service replays per API key)${lost}`;
  }
  const labels = [...keys].map((key) => result.trace.label(key)).join(", ");
  return `paid under ${keys.size} keys (${labels}): the row moved to a new key while an order existed under an old one`;
}

function violationText(result: SoakResult, violation: Violation): string[] {
  const lines = [
    `  VIOLATION ${violation.kind}${violation.row ? ` r${violation.row}` : ""}: ${violation.detail}`,
  ];
  const row = result.rows.find((r) => r.row === violation.row);
  if (!row) return lines;
  const error = row.errorType ? `, last error ${row.errorType}` : "";
  const replayed = row.replayed ? ", replayed" : "";
  lines.push(
    `    ledger: ${row.status} under ${row.key ? result.trace.label(row.key) : "(no key)"}${error}${replayed}`,
  );
  const orders = ordersOf(result, row.email);
  for (const order of orders) lines.push(`    service: ${orderText(result, order)}`);
  if (violation.kind === "paid-twice")
    lines.push(`    guess: ${twiceGuess(result, orders.filter(isPaid))}`);
  return lines;
}

function traceText(lines: string[]): string[] {
  if (lines.length <= TRACE_LINES) return lines;
  const half = TRACE_LINES / 2;
  return [
    ...lines.slice(0, half),
    `... ${lines.length - TRACE_LINES} lines ...`,
    ...lines.slice(-half),
  ];
}

/** One line for a seed that held every invariant. */
export function passText(result: SoakResult): string {
  return `ok   seed ${result.scenario.seed} (${result.ms} ms): ${stepsText(result.scenario)}`;
}

/** A failing seed in full: plan, violations with the rows' orders, ledger, trace. */
export function failureText(result: SoakResult): string {
  const { scenario } = result;
  return [
    `${result.violations.length > 0 ? "FAIL" : "ok  "} seed ${scenario.seed} (${result.ms} ms): ${scenarioText(scenario)}`,
    `  events: ${stepsText(scenario)}`,
    `  replay: npm run soak -- --seed ${scenario.seed}`,
    ...result.violations.flatMap((violation) => violationText(result, violation)),
    "  ledger orders at rest:",
    ...result.ledgerOrders.map((line) => `    ${line}`),
    "  trace:",
    ...traceText(result.trace.lines).map((line) => `    ${line}`),
  ].join("\n");
}

/** One line per violation, for a summary of many seeds; a paid-twice one with its guess. */
export function summaryLines(result: SoakResult): string[] {
  return result.violations.map((v) => {
    const row = result.rows.find((r) => r.row === v.row);
    const paid = row ? ordersOf(result, row.email).filter(isPaid) : [];
    const guess = v.kind === "paid-twice" ? ` [${twiceGuess(result, paid)}]` : "";
    return `seed ${result.scenario.seed}: ${v.kind}${v.row ? ` r${v.row}` : ""}: ${v.detail}${guess}`;
  });
}

/** How one attempt's end is counted in the coverage line: status and error type. */
function attemptName(attempt: SoakResult["trace"]["attempts"][number]): string {
  const type = attempt.errorType ? ` ${attempt.errorType}` : "";
  return `${attempt.status}${type}${attempt.replayed ? " replayed" : ""}`;
}

/**
 * What a batch of seeds exercised: the service's answers by kind, and the events drawn, so a
 * green batch can be told from one that never reached the paths it is about.
 */
export function coverageText(results: SoakResult[]): string {
  const answers = new Map<string, number>();
  const events = new Map<string, number>();
  const add = (map: Map<string, number>, name: string) => map.set(name, (map.get(name) ?? 0) + 1);
  for (const result of results) {
    for (const attempt of result.trace.attempts) add(answers, attemptName(attempt));
    for (const step of result.scenario.steps) add(events, step.event.kind);
    if (result.scenario.webhooks) add(events, "(webhooks on)");
    const other = result.scenario.otherImport;
    if (other) add(events, `import again${other.allowRepeats ? " --allow-repeats" : ""}`);
    // How the second import ended: recorded, or refused as repeats (trace.ts's notes).
    for (const line of result.trace.lines)
      if (/ms import as soak-again.* refused: /.test(line)) add(events, "(import again refused)");
      else if (/ms import soak-again: /.test(line)) add(events, "(import again recorded)");
  }
  const list = (map: Map<string, number>) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([name, n]) => `${name} x${n}`)
      .join(", ");
  return `answers: ${list(answers)}\nevents: ${list(events)}`;
}

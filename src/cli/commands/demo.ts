import { runDemo } from "../../demo/run-demo.js";
import { progressBar } from "../progress.js";
import { createContext, printJson } from "../run-action.js";

/** `demo`: the whole product end to end on the embedded sandbox, then a summary. */
export async function runDemoCommand(opts: { rows: number; json?: boolean }): Promise<number> {
  const ctx = createContext(opts.json);
  const bars = {
    sync: progressBar(ctx.interactive, "catalog |{bar}| {value} products"),
    orders: progressBar(false, ""),
  };
  let ordersStarted = false;
  const result = await runDemo({
    config: ctx.config,
    // One line per order drowns the summary; GIFTJOBS_LOG_LEVEL=debug shows them.
    log: ctx.config.logLevel === "info" ? ctx.log.child({}, { level: "warn" }) : ctx.log,
    rows: opts.rows,
    // The user waited since the process started (its modules loaded, Redis and the sandbox
    // started), not only for the campaign.
    startedAt: performance.timeOrigin,
    onProgress: (p) => {
      if (p.phase === "sync") return bars.sync.update(p.done);
      if (!ordersStarted) {
        ordersStarted = true;
        bars.sync.stop();
        bars.orders = progressBar(
          ctx.interactive,
          "orders  |{bar}| {value}/{total} rows done",
          p.total,
        );
      }
      bars.orders.setTotal(p.total);
      bars.orders.update(p.done);
    },
  });
  bars.sync.stop();
  bars.orders.stop();
  if (opts.json) printJson(result);
  else printSummary(result);
  return 0;
}

function printSummary(r: Awaited<ReturnType<typeof runDemo>>): void {
  const s = r.status;
  const lines = [
    `demo campaign "${r.campaign}" done in ${(r.duration_ms / 1000).toFixed(1)} s`,
    `  rows: ${r.rows} (${r.new_rows} new, ${r.already_known} already known); orders placed this run: ${r.orders}`,
    `  completed ${s.completed}, failed_final ${s.failed_final}, failed_uncertain ${s.failed_uncertain}`,
    ...Object.entries(r.totals).map(
      ([c, t]) => `  ${c}: face value ${t.face_value}, price ${t.price}`,
    ),
    `  snapshot: ${r.snapshot}`,
    `  diff:     ${r.diff}`,
    `  orders:   ${r.csv}`,
    `  report:   ${r.report}`,
  ];
  if (r.new_rows === 0) lines.push("  (every row was already known: nothing was paid again)");
  lines.push(...nextLines(r));
  process.stdout.write(`${lines.join("\n")}\n`);
}

/** The two commands to try next, each with what it shows. */
function nextLines(r: Awaited<ReturnType<typeof runDemo>>): string[] {
  const [first = "", second = ""] = r.next;
  const width = Math.max(first.length, second.length) + 2;
  if (first.includes("GIFTJOBS_PREFIX"))
    return [
      "next, try (the demo's campaign is under its own Redis prefix, which they set):",
      `  ${first.padEnd(width)}the demo's campaign: its state, rows and money`,
      `  ${second.padEnd(width)}the same in a browser, at http://127.0.0.1:3000/campaigns`,
    ];
  return [
    "the demo ran on a private Redis, stopped now: no command shows its campaign (with Redis 7 at GIFTJOBS_REDIS_URL, orders list would)",
    "next, try:",
    `  ${first.padEnd(width)}what a real run needs: Redis, the service, the API key`,
    `  ${second.padEnd(width)}the service's catalog: the first step of a real run`,
  ];
}

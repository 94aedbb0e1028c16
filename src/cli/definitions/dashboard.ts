import type { Command } from "commander";
import { lazyActions } from "../lazy-action.js";
import { collect, portNumber } from "../option-parsers.js";

const run = lazyActions(() => import("../commands/dashboard.js"));

/** Registers `dashboard`. */
export function register(program: Command): void {
  program
    .command("dashboard")
    .description(
      "Serve the campaigns page and the queue dashboard (bull-board) until SIGINT/SIGTERM.",
    )
    .option("--port <port>", "port to listen on (0: any free port)", portNumber, 3000)
    .option(
      "--host <host>",
      "interface to bind (anything but loopback exposes the queues)",
      "127.0.0.1",
    )
    .option(
      "--public-host <name>",
      "a host name the dashboard is reached by (repeatable); other Host headers get 421",
      collect,
      [],
    )
    .option(
      "--allow-actions",
      "show the action buttons (approve, pause, resume, cancel, retry) on the campaign pages, and bull-board's retry and clean; off loopback they need GIFTJOBS_DASHBOARD_TOKEN",
    )
    .action(run("runDashboard"));
}

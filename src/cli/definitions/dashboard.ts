// The definitions of `giftjobs dashboard`: names, arguments, options and help, loaded at start-up; the
// actions import their implementation from src/cli/commands/ when they run
// (docs/architecture/command-line.md, "Start-up").
import type { Command } from "commander";
import { lazyActions } from "../lazy-action.js";
import { collect, portNumber } from "../option-parsers.js";

const runDashboard = lazyActions(() => import("../commands/dashboard.js"));

/** Registers `dashboard`. */
export function registerDashboard(program: Command): void {
  const dashboard = program
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
      "show the action buttons (approve, pause, resume, cancel, retry) on the campaign pages, and bull-board's retry and clean; off loopback they need GIFTJOBS_DASHBOARD_TOKEN or --users",
    )
    .option(
      "--users <file>",
      "named users (NAME:ROLES:ID:HASH lines, made by `dashboard add-user`): every page needs sign-in, each action its role; replaces GIFTJOBS_DASHBOARD_TOKEN",
    )
    .action(runDashboard("runDashboard"));
  // The parent's --users names the file: commander gives a parent's option to the parent
  // wherever it stands, so add-user reads it from there (src/cli/commands/dashboard.ts).
  dashboard
    .command("add-user")
    .description(
      "Add a user to the --users file with a new random token, printed once (only its scrypt hash is kept).",
    )
    .argument("<name>", "the person, as the audit trail shows them")
    .requiredOption(
      "--roles <roles>",
      "comma-separated: view (read), operate (pause, resume, cancel, retry), approve",
    )
    .action(runDashboard("runAddUser"));
}

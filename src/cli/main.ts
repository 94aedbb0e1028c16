import { Command, CommanderError, type Option } from "commander";
import { registerAudit } from "./definitions/audit.js";
import { registerCatalog } from "./definitions/catalog.js";
import { registerDashboard } from "./definitions/dashboard.js";
import { registerDb } from "./definitions/db.js";
import { registerDemo } from "./definitions/demo.js";
import { registerDoctor } from "./definitions/doctor.js";
import { register as registerOrders } from "./definitions/orders.js";
import { registerSandbox } from "./definitions/sandbox.js";
import { registerWebhooks } from "./definitions/webhooks.js";
import { registerWorker } from "./definitions/worker.js";
import { quietOnClosedOutput } from "./output.js";

/**
 * The commands as commander knows them: names, arguments, options, help. Only these are loaded
 * at start-up; each command's implementation (src/cli/commands/) is imported when it runs, so
 * `--help` loads no exceljs, BullMQ or pg (docs/architecture/command-line.md, "Start-up").
 */
export function buildProgram(): Command {
  const program = new Command("giftjobs")
    .description("Mirror a gift-card catalog and place orders in bulk, safely.")
    .version("0.1.0")
    .option(
      "--as <name>",
      "who runs this, for the audit trail (default: GIFTJOBS_ACTOR or the OS user); a claim, proves nothing",
    )
    .option(
      "--token-file <path>",
      "prove who runs this: a file holding your token of the users file (GIFTJOBS_USERS_FILE); default GIFTJOBS_USER_TOKEN",
    )
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();
  // The actor goes to the environment: every command and its child processes read it there
  // (src/audit/actor.ts).
  program.hook("preAction", async (root) => {
    const { as, tokenFile } = root.opts<{ as?: string; tokenFile?: string }>();
    if (as !== undefined) {
      const { checkActorName } = await import("../audit/actor.js");
      process.env.GIFTJOBS_ACTOR = checkActorName(as, "--as");
    }
    // A token proves a user of the users file (docs/architecture/audit.md, "Who acted").
    if (tokenFile === undefined && !process.env.GIFTJOBS_USER_TOKEN?.trim()) return;
    const { proveUser } = await import("./user-token.js");
    const { usersFileSetting } = await import("../config.js");
    const { usersStore } = await import("../stores/stores.js");
    const file = usersFileSetting();
    await proveUser({ tokenFile, users: file && usersStore(file) });
  });
  registerSandbox(program);
  registerCatalog(program);
  registerOrders(program);
  registerWorker(program);
  registerWebhooks(program);
  registerDashboard(program);
  registerDemo(program);
  registerDoctor(program);
  registerDb(program);
  registerAudit(program);
  return program;
}

// exitOverride applies to a subcommand only when set on it: set it all the way down.
function overrideExits(command: Command): void {
  command.exitOverride();
  for (const sub of command.commands) overrideExits(sub);
}

/**
 * Commander checks required options before unknown ones: `status --campain x` would be told
 * that --campaign is missing. Here they are checked in a preAction hook instead, which runs
 * after commander's unknown-option check (docs/commands.md, "Mistyped options").
 */
function requireOptionsLast(program: Command): void {
  const required = new Map<Command, Option[]>();
  const collect = (command: Command) => {
    const options = command.options.filter((option) => option.mandatory);
    for (const option of options) option.mandatory = false;
    required.set(command, options);
    for (const sub of command.commands) collect(sub);
  };
  collect(program);
  program.hook("preAction", (_program, actionCommand) => {
    for (let command: Command | null = actionCommand; command; command = command.parent) {
      for (const option of required.get(command) ?? []) {
        if (command.getOptionValue(option.attributeName()) === undefined)
          command.error(`error: required option '${option.flags}' not specified`, {
            code: "commander.missingMandatoryOptionValue",
          });
      }
    }
  });
}

/**
 * Commander's errors in one line, as giftjobs' own begin (`giftjobs: error: ...`): its
 * suggestion ("\n(Did you mean --campaign?)") joins the message, as `unknown option
 * '--campain' (did you mean --campaign?)`.
 */
function oneLineErrors(command: Command): void {
  // Set on each command: subcommands copied their parent's settings when they were made.
  for (const sub of command.commands) oneLineErrors(sub);
  command.configureOutput({
    outputError: (text, write) =>
      write(
        `giftjobs: ${text.replace(/\n\(Did you mean ([^)]*)\)/, (_m, name: string) => ` (did you mean ${name})`)}`,
      ),
  });
}

/** Entry point of the `giftjobs` binary. Exit codes: 0 done, 1 failed, 2 bad usage or input. */
export async function main(argv: string[]): Promise<void> {
  // Before anything is printed: a reader gone away stops no command (src/cli/output.ts).
  quietOnClosedOutput();
  const program = buildProgram();
  overrideExits(program);
  requireOptionsLast(program);
  oneLineErrors(program);
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander already printed the message (or help/version).
      process.exitCode = error.exitCode === 0 ? 0 : 2;
      return;
    }
    const { reportError } = await import("./run-action.js");
    process.exitCode = reportError(error);
  }
}

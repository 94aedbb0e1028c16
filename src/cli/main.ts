import { Command, CommanderError } from "commander";
import { register as registerCatalog } from "./commands/catalog.js";
import { register as registerDashboard } from "./commands/dashboard.js";
import { register as registerDb } from "./commands/db.js";
import { register as registerDemo } from "./commands/demo.js";
import { register as registerDoctor } from "./commands/doctor.js";
import { register as registerOrders } from "./commands/orders.js";
import { register as registerSandbox } from "./commands/sandbox.js";
import { register as registerWebhooks } from "./commands/webhooks.js";
import { register as registerWorker } from "./commands/worker.js";
import { reportError } from "./run-action.js";

export function buildProgram(): Command {
  const program = new Command("giftjobs")
    .description("Mirror a gift-card catalog and place orders in bulk, safely.")
    .version("0.1.0")
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();
  registerSandbox(program);
  registerCatalog(program);
  registerOrders(program);
  registerWorker(program);
  registerWebhooks(program);
  registerDashboard(program);
  registerDemo(program);
  registerDoctor(program);
  registerDb(program);
  return program;
}

// exitOverride applies to a subcommand only when set on it: set it all the way down.
function overrideExits(command: Command): void {
  command.exitOverride();
  for (const sub of command.commands) overrideExits(sub);
}

/** Entry point of the `giftjobs` binary. Exit codes: 0 done, 1 failed, 2 bad usage or input. */
export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  overrideExits(program);
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander already printed the message (or help/version).
      process.exitCode = error.exitCode === 0 ? 0 : 2;
      return;
    }
    process.exitCode = reportError(error);
  }
}

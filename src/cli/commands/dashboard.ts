import type { Command } from "commander";
import { dashboardTokenFrom } from "../../dashboard/action-token.js";
import { startDashboard } from "../../dashboard/start-dashboard.js";
import { addUser, parseRoles } from "../../dashboard/users-file.js";
import { UserError } from "../../errors/user-error.js";
import { createContext } from "../run-action.js";
import { untilSignal } from "../until-signal.js";

interface DashboardFlags {
  port: number;
  host: string;
  publicHost: string[];
  allowActions?: boolean;
  users?: string;
}

/** `dashboard`: the campaigns pages and bull-board until SIGINT or SIGTERM. */
export async function runDashboard(opts: DashboardFlags): Promise<number> {
  const ctx = createContext();
  const dashboard = await startDashboard({
    config: ctx.config,
    port: opts.port,
    host: opts.host,
    publicHosts: opts.publicHost,
    allowActions: opts.allowActions ?? false,
    actionToken: dashboardTokenFrom(),
    usersFile: opts.users,
    log: ctx.log,
  });
  // Listened for before the line that says it is ready: a supervisor may stop it right after.
  const stopped = untilSignal();
  process.stdout.write(`dashboard on ${dashboard.url}\n`);
  await stopped;
  await dashboard.close();
  return 0;
}

/**
 * `dashboard add-user NAME --roles ROLES --users FILE`: the line is added to the file, and the
 * token is printed once on stdout, for the operator to hand to the user; it is kept nowhere.
 */
export async function runAddUser(
  name: string,
  opts: { roles: string },
  command: Command,
): Promise<number> {
  const file = command.parent?.opts<DashboardFlags>().users;
  if (!file)
    throw new UserError("dashboard add-user needs --users FILE: the file to add the user to");
  const roles = parseRoles(opts.roles, "--roles");
  const added = await addUser(file, name, roles);
  process.stdout.write(
    `added ${added.name} (${added.roles.join(", ")}) to ${file}\ntoken (shown this once; give it to ${added.name}, it is kept nowhere): ${added.token}\n`,
  );
  return 0;
}

import { dashboardTokenFrom } from "../../dashboard/action-token.js";
import { startDashboard } from "../../dashboard/start-dashboard.js";
import { createContext } from "../run-action.js";
import { untilSignal } from "../until-signal.js";

interface DashboardFlags {
  port: number;
  host: string;
  publicHost: string[];
  allowActions?: boolean;
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
    log: ctx.log,
  });
  process.stdout.write(`dashboard on ${dashboard.url}\n`);
  await untilSignal();
  await dashboard.close();
  return 0;
}

import type { Command } from "commander";
import { registerCampaignCommands } from "./campaigns.js";
import { registerReport, registerRetry, registerStatus } from "./orders-campaign.js";
import { registerImport } from "./orders-import.js";
import { registerLinks } from "./orders-links.js";
import { registerPayouts, registerReconcile } from "./orders-reconcile.js";
import { registerTemplate } from "./orders-template.js";

/**
 * Registers `orders import|status|report|retry|reconcile|payouts`, and the lifecycle commands of
 * campaigns.ts.
 */
export function register(program: Command): void {
  const orders = program
    .command("orders")
    .description(
      "Order campaigns: import a CSV or .xlsx, follow, report, retry; a template to fill.",
    );
  registerImport(orders);
  registerTemplate(orders);
  registerStatus(orders);
  registerReport(orders);
  registerLinks(orders);
  registerRetry(orders);
  registerReconcile(orders);
  registerPayouts(orders);
  registerCampaignCommands(orders);
}

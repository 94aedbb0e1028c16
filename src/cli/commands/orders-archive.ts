import {
  type ArchiveResult,
  archiveCampaign,
  type RestoreResult,
  restoreCampaign,
} from "../../campaigns/archive.js";
import { grouped } from "../../grouped.js";
import { plural } from "../../plural.js";
import { campaignCommand } from "./campaigns.js";

/** `orders archive`. */
export const runArchive = campaignCommand(
  async (ledger, name, config) => {
    const result = await archiveCampaign(ledger, name, { dataDir: config.dataDir });
    const audit = { outcome: result.outcome, rows: result.rows, orders: result.orders };
    return { json: result, text: archiveText(result), audit };
  },
  { action: "archive", without: "warn" },
);

/** `orders restore`. */
export const runRestore = campaignCommand(
  async (ledger, name) => {
    const result = await restoreCampaign(ledger, name);
    const audit = { state: result.state, rows: result.rows, orders: result.orders };
    return { json: result, text: restoreText(result), audit };
  },
  { action: "restore", without: "warn" },
);

function archiveText(r: ArchiveResult): string {
  const what =
    r.outcome === "already"
      ? `campaign ${r.campaign} was archived already (${r.archived_at}); its files match the manifest`
      : `campaign ${r.campaign} archived: ${grouped(r.rows)} ${plural(r.rows, "row")}, ${grouped(r.orders)} ${plural(r.orders, "order")}`;
  return `${what}\n  archive: ${r.archive}\n`;
}

function restoreText(r: RestoreResult): string {
  return `campaign ${r.campaign} restored (${r.state}): ${grouped(r.rows)} ${plural(r.rows, "row")}, ${grouped(r.orders)} ${plural(r.orders, "order")}, from ${r.archive}\n`;
}

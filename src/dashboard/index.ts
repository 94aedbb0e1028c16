export { CAMPAIGN_ACTIONS, type CampaignAction } from "./campaign-actions.js";
export { type CampaignOverview, campaignOverviews } from "./campaign-overviews.js";
export { type CampaignProgress, RateMeter } from "./campaign-progress.js";
export { campaignStatuses } from "./campaign-statuses.js";
export { type CampaignsPageOptions, renderCampaignsPage } from "./campaigns-page.js";
export { escapeHtml } from "./html-escape.js";
export { type QueueBoardOptions, queueBoard } from "./queue-board.js";
export {
  BOARD_PATH,
  type RunningDashboard,
  type StartDashboardOptions,
  startDashboard,
} from "./start-dashboard.js";

import { describe, expect, it } from "vitest";
import {
  connectRedis,
  importCampaign,
  Ledger,
  loadConfig,
  loadCurrentIndex,
  QUEUES,
  startSandbox,
  startWebhookReceiver,
  startWorkers,
  syncCatalog,
  webhookSecretFrom,
} from "../src/index.js";

// package.json "main" is this module compiled: what it promises must be there.
describe("the library entry point", () => {
  it("exports the catalog sync, the campaign import, the workers, the webhook receiver and the sandbox", () => {
    const exported = {
      syncCatalog,
      importCampaign,
      startWorkers,
      startSandbox,
      startWebhookReceiver,
      webhookSecretFrom,
      loadConfig,
      loadCurrentIndex,
      connectRedis,
      Ledger,
    };
    for (const [name, value] of Object.entries(exported)) {
      expect(typeof value, name).toBe("function");
    }
    expect(QUEUES).toEqual({ orders: "orders", catalog: "catalog", maintenance: "maintenance" });
  });
});

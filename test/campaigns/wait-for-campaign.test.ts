import { describe, expect, it } from "vitest";
import { waitForCampaign } from "../../src/campaigns/wait-for-campaign.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { oneRowOrders } from "../helpers/ledger-fixtures.js";
import { useRedisPrefix } from "../helpers/redis-prefix.js";

describe("waitForCampaign", () => {
  const r = useRedisPrefix("wait");

  it("times out while rows are pending, and returns once none is", async () => {
    const ledger = new Ledger(r.redis, r.prefix);
    await ledger.orders.record("w", oneRowOrders("w", ["a"]));
    const seen: number[] = [];
    const waited = await waitForCampaign(ledger, "w", {
      timeoutMs: 150,
      pollMs: 20,
      onStatus: (s) => seen.push(s.queued),
    });
    expect(waited).toMatchObject({ timedOut: true, status: { queued: 1 } });
    expect(seen.length).toBeGreaterThan(1);

    setTimeout(
      () =>
        void ledger.orders.transition({
          campaign: "w",
          number: 1,
          from: ["queued"],
          to: "completed",
        }),
      50,
    );
    const done = await waitForCampaign(ledger, "w", { timeoutMs: 5000, pollMs: 20 });
    expect(done).toMatchObject({ timedOut: false, status: { completed: 1, queued: 0 } });
  });
});

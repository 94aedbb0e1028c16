import { beforeEach, describe, expect, it } from "vitest";
import {
  approveCampaign,
  cancelCampaign,
  pauseCampaign,
  resumeCampaign,
} from "../../src/campaigns/control.js";
import { retryCampaign } from "../../src/campaigns/retry.js";
import { campaignStatus } from "../../src/campaigns/status.js";
import { campaignSummary } from "../../src/campaigns/summary.js";
import { UserError } from "../../src/errors/user-error.js";
import { Ledger } from "../../src/ledger/ledger.js";
import type { StoredState } from "../../src/ledger/types.js";
import { redisKey } from "../../src/redis/redis-key.js";
import { oneRowOrders } from "../helpers/ledger-fixtures.js";
import { useRedisPrefix } from "../helpers/redis-prefix.js";

describe("campaign states in the ledger", () => {
  const r = useRedisPrefix("states");
  let ledger: Ledger;
  beforeEach(() => {
    ledger = new Ledger(r.redis, r.prefix);
  });

  /** A campaign of `n` one-row orders numbered 1..n, each 10.00 USD face value, 9.50 price. */
  async function campaign(name: string, n: number, state: StoredState = "running") {
    await ledger.campaigns.register(name, { execution_mode: "sync", state });
    const ids = Array.from({ length: n }, (_, i) => `id${i + 1}`);
    await ledger.orders.record(
      name,
      oneRowOrders(name, ids, {
        row: () => ({ face_value: "10.00" }),
        order: () => ({ face: "1000", price: "950" }),
      }),
    );
  }

  const start = (name: string, n: number) =>
    ledger.orders.start({ campaign: name, number: n, patch: { attempts: 1 } });

  it("hands out keys of running campaigns only, at most a window each", async () => {
    await campaign("run", 5);
    await campaign("held", 5, "held");
    // A budget of 2 jobs, windows of at least 1.
    const first = await ledger.dispatch.handOut(2, 1);
    expect(first).toEqual([
      { campaign: "run", number: 1 },
      { campaign: "run", number: 2 },
    ]);
    // The window is full until a job ends.
    expect(await ledger.dispatch.handOut(2, 1)).toEqual([]);
    expect(await start("run", 1)).toMatchObject({ kind: "started" });
    await ledger.orders.transition({
      campaign: "run",
      number: 1,
      from: ["in_flight"],
      to: "completed",
    });
    expect(await ledger.dispatch.handOut(2, 1)).toEqual([{ campaign: "run", number: 3 }]);

    // Two campaigns with work now share the budget: a window of 1 each. "run" has 2 jobs out.
    await approveCampaign(ledger, "held");
    expect(await ledger.dispatch.handOut(2, 1)).toEqual([{ campaign: "held", number: 1 }]);
    expect(await ledger.dispatch.handOut(2, 1)).toEqual([]);
  });

  it("refuses to pause a campaign that has ended (exit 2), instead of saying paused", async () => {
    await campaign("ended", 2);
    for (const n of [1, 2]) {
      expect(await start("ended", n)).toMatchObject({ kind: "started" });
      await ledger.orders.transition({
        campaign: "ended",
        number: n,
        from: ["in_flight"],
        to: "completed",
      });
    }
    const refused = pauseCampaign(ledger, "ended");
    await expect(refused).rejects.toBeInstanceOf(UserError);
    await expect(refused).rejects.toThrow("campaign ended has ended: all 2 rows are done");
    expect((await campaignStatus(ledger, "ended")).state).toBe("done");
    expect((await ledger.campaigns.meta("ended")).state ?? "running").toBe("running");
  });

  it("hands the campaigns' keys out in turn, one each, so their jobs alternate in the queue", async () => {
    await campaign("a", 3);
    await campaign("b", 3);
    const handed = await ledger.dispatch.handOut(4, 1);
    const campaigns = handed.map((h) => h.campaign);
    expect(campaigns).toHaveLength(4);
    expect(campaigns[0]).not.toBe(campaigns[1]);
    expect(campaigns.slice(2)).toEqual(campaigns.slice(0, 2));
    expect(handed.filter((h) => h.campaign === "a").map((h) => h.number)).toEqual([1, 2]);
  });

  it("a paused campaign's job gives its order back, unsent, to the front of pending", async () => {
    await campaign("p", 3);
    await ledger.dispatch.handOut(10);
    expect(await pauseCampaign(ledger, "p")).toBe(true);
    expect(await pauseCampaign(ledger, "p")).toBe(false);
    expect(await start("p", 2)).toEqual({ kind: "paused", reason: "paused by operator" });
    expect(await ledger.dispatch.windowOrders("p")).toEqual(expect.not.arrayContaining([2]));
    expect(await r.redis.lrange(ledger.keys("p").pending, 0, -1)).toEqual(["2"]);
    expect(await ledger.dispatch.handOut(10)).toEqual([]);
    expect((await campaignStatus(ledger, "p")).state).toBe("paused");
    await resumeCampaign(ledger, "p");
    expect(await ledger.dispatch.handOut(10)).toEqual([{ campaign: "p", number: 2 }]);
  });

  it("cancel: unsent rows cancelled, an ambiguous one failed_uncertain, a submitted one left to follow", async () => {
    await campaign("c", 5);
    await ledger.dispatch.handOut(3, 1); // k1..k3 in the window, k4 and k5 pending
    await start("c", 1);
    await ledger.orders.transition({
      campaign: "c",
      number: 1,
      from: ["in_flight"],
      to: "submitted",
      patch: { order_id: "O-1" },
    });
    await start("c", 2);
    // A 5xx: back to queued under the same key, an order may exist.
    await ledger.orders.transition({
      campaign: "c",
      number: 2,
      from: ["in_flight"],
      to: "queued",
      patch: { error_type: "http_503" },
    });
    await cancelCampaign(ledger, "c");
    const status = await campaignStatus(ledger, "c");
    expect(status).toMatchObject({
      state: "cancelled",
      queued: 0,
      submitted: 1,
      cancelled: 3,
      failed_uncertain: 1,
    });
    expect((await ledger.orders.getOrder("c", 2))?.error_type).toBe("cancelled_uncertain");
    expect(await ledger.dispatch.pendingCount("c")).toBe(0);
    // A job still in BullMQ finds nothing to send.
    expect(await start("c", 3)).toEqual({ kind: "past", status: "cancelled" });
    expect(await ledger.dispatch.handOut(10)).toEqual([]);
    // Final: not resumed, approved or retried.
    await expect(resumeCampaign(ledger, "c")).rejects.toThrow(UserError);
    await expect(approveCampaign(ledger, "c")).rejects.toThrow(/is cancelled/);
    await expect(retryCampaign(ledger, "c", {})).rejects.toThrow(/cannot be retried/);
    // The submitted order is still followed to its end; then the campaign is finished.
    await ledger.orders.transition({
      campaign: "c",
      number: 1,
      from: ["submitted"],
      to: "completed",
    });
    const summary = await campaignSummary(ledger, "c");
    expect(summary.finished_at).not.toBeNull();
    expect(summary.money.USD).toMatchObject({ rows: 5, face_value: "50.00", spent: "9.50" });
  });

  it("cancel reaches orders that were in flight on a worker that died, next generations and retries", async () => {
    await campaign("late", 4);
    await ledger.dispatch.handOut(10);
    // k1 in flight on a worker that then died; k2 in flight and refused (a 4xx) after the cancel;
    // k3 failed_uncertain, retried under the same key by a retry that checked the state first.
    await start("late", 1);
    await start("late", 2);
    await start("late", 3);
    await ledger.orders.transition({
      campaign: "late",
      number: 3,
      from: ["in_flight"],
      to: "failed_uncertain",
      patch: { error_type: "timeout" },
    });
    // Paused first: a cancelled campaign shows no pause any more.
    expect(await pauseCampaign(ledger, "late")).toBe(true);
    await cancelCampaign(ledger, "late");

    expect(await start("late", 1)).toEqual({ kind: "past", status: "failed_uncertain" });
    expect(await ledger.orders.getOrder("late", 1)).toMatchObject({
      error_type: "cancelled_uncertain",
    });
    const rekeyed = await ledger.orders.rekey({
      campaign: "late",
      number: 2,
      key: "k2-next",
      identities: ["id2"],
      generation: 1,
      from: ["in_flight"],
    });
    expect(rekeyed).toEqual({ done: true, number: 5 });
    expect(await ledger.orders.getOrder("late", 5)).toMatchObject({
      key: "k2-next",
      status: "cancelled",
    });
    const retried = await ledger.orders.transition({
      campaign: "late",
      number: 3,
      from: ["failed_uncertain"],
      to: "queued",
      patch: {},
      follow: "pending",
    });
    expect(retried.moved).toBe(false);

    expect(await ledger.dispatch.pendingCount("late")).toBe(0);
    const status = await campaignStatus(ledger, "late");
    expect(status).toMatchObject({ state: "cancelled", queued: 0, in_flight: 0, paused: null });
    expect(status.cancelled + status.failed_uncertain).toBe(4);
  });

  it("done once nothing is queued, in flight or submitted; spend counts completed orders once", async () => {
    await campaign("d", 2);
    for (const key of [1, 2]) {
      await start("d", key);
      await ledger.orders.transition({
        campaign: "d",
        number: key,
        from: ["in_flight"],
        to: "completed",
        patch: {},
      });
    }
    await ledger.orders.transition({
      campaign: "d",
      number: 2,
      from: ["*"],
      to: "completed",
      patch: {},
    });
    const summary = await campaignSummary(ledger, "d");
    expect(summary).toMatchObject({ state: "done", completed: 2 });
    expect(summary.money.USD).toMatchObject({ price: "19.00", spent: "19.00" });
  });

  it("a campaign with nothing to send leaves the running set; what gives it orders again puts it back", async () => {
    await campaign("idle", 2);
    const running = () => r.redis.sismember(redisKey(r.prefix, "running"), "idle");
    await ledger.dispatch.handOut(10);
    for (const n of [1, 2]) {
      await start("idle", n);
      await ledger.orders.transition({
        campaign: "idle",
        number: n,
        from: ["in_flight"],
        to: "failed_uncertain",
        patch: { error_type: "x" },
      });
    }
    expect(await running()).toBe(1);
    // Nothing pending, scheduled or out: the next pass drops it (it costs every pass otherwise).
    expect(await ledger.dispatch.handOut(10)).toEqual([]);
    expect(await running()).toBe(0);
    // A retry puts it back, in the step that queues the order again.
    await ledger.orders.transition({
      campaign: "idle",
      number: 1,
      from: ["failed_uncertain"],
      to: "queued",
      patch: {},
      follow: "pending",
    });
    expect(await running()).toBe(1);
    expect(await ledger.dispatch.handOut(10)).toEqual([{ campaign: "idle", number: 1 }]);
    await start("idle", 1);
    // So does a next generation (REKEY), and new rows (RECORD).
    await ledger.orders.transition({
      campaign: "idle",
      number: 1,
      from: ["in_flight"],
      to: "completed",
    });
    await ledger.dispatch.handOut(10);
    expect(await running()).toBe(0);
    await ledger.orders.rekey({
      campaign: "idle",
      number: 2,
      key: "k2-next",
      identities: ["id2"],
      generation: 1,
      from: ["failed_uncertain"],
      // An order may exist under a failed_uncertain key: only the operator's --include-uncertain moves it.
      clearance: "force",
    });
    expect(await running()).toBe(1);
    expect(await ledger.dispatch.handOut(10)).toEqual([{ campaign: "idle", number: 3 }]);
    await start("idle", 3);
    await ledger.orders.transition({
      campaign: "idle",
      number: 3,
      from: ["in_flight"],
      to: "completed",
    });
    await ledger.dispatch.handOut(10);
    expect(await running()).toBe(0);
    await ledger.orders.record("idle", oneRowOrders("idle", ["id9"]));
    expect(await running()).toBe(1);
  });

  it("a replayed order is counted", async () => {
    await campaign("rp", 1);
    await start("rp", 1);
    await ledger.orders.transition({
      campaign: "rp",
      number: 1,
      from: ["in_flight"],
      to: "completed",
      patch: { replayed: true },
    });
    expect(await campaignStatus(ledger, "rp")).toMatchObject({ completed: 1, replayed: 1 });
  });
});

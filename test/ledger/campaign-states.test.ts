import { beforeEach, describe, expect, it } from "vitest";
import { UserError } from "../../src/errors/user-error.js";
import {
  approveCampaign,
  cancelCampaign,
  pauseCampaign,
  resumeCampaign,
} from "../../src/orders/campaign-control.js";
import { retryCampaign } from "../../src/orders/campaign-retry.js";
import { campaignStatus } from "../../src/orders/campaign-status.js";
import { campaignSummary } from "../../src/orders/campaign-summary.js";
import { Ledger, type LedgerRow, type StoredState } from "../../src/orders/ledger.js";
import { ledgerRow, orderRequest } from "../helpers/ledger-fixtures.js";
import { useRedisPrefix } from "../helpers/redis-prefix.js";

const REQUEST = orderRequest("u@example.com", "P1");

const row = (key: string, line: number) => ledgerRow(key, line, { face_value: "10.00" });

describe("campaign states in the ledger", () => {
  const r = useRedisPrefix("states");
  let ledger: Ledger;
  beforeEach(() => {
    ledger = new Ledger(r.redis, r.prefix);
  });

  /** A campaign of `n` one-row orders k1..kn, each 10.00 USD face value, 9.50 price. */
  async function campaign(name: string, n: number, state: StoredState = "running") {
    await ledger.register(name, { execution_mode: "sync", state });
    const rows: [string, LedgerRow][] = [];
    const orders: Parameters<Ledger["record"]>[2] = [];
    for (let i = 1; i <= n; i++) {
      rows.push([`id${i}`, row(`k${i}`, i + 1)]);
      orders.push([
        `k${i}`,
        {
          identities: [`id${i}`],
          generation: 0,
          status: "queued",
          currency: "USD",
          face: "1000",
          price: "950",
        },
        REQUEST,
      ]);
    }
    await ledger.record(name, rows, orders);
  }

  const start = (name: string, key: string) => ledger.start(name, key, { attempts: 1 });

  it("hands out keys of running campaigns only, at most a window each", async () => {
    await campaign("run", 5);
    await campaign("held", 5, "held");
    // A budget of 2 jobs, windows of at least 1.
    const first = await ledger.dispatch(2, 1);
    expect(first).toEqual([
      { campaign: "run", key: "k1" },
      { campaign: "run", key: "k2" },
    ]);
    // The window is full until a job ends.
    expect(await ledger.dispatch(2, 1)).toEqual([]);
    expect(await start("run", "k1")).toMatchObject({ kind: "started" });
    await ledger.transition("run", "k1", ["in_flight"], "completed");
    expect(await ledger.dispatch(2, 1)).toEqual([{ campaign: "run", key: "k3" }]);

    // Two campaigns with work now share the budget: a window of 1 each. "run" has 2 jobs out.
    await approveCampaign(ledger, "held");
    expect(await ledger.dispatch(2, 1)).toEqual([{ campaign: "held", key: "k1" }]);
    expect(await ledger.dispatch(2, 1)).toEqual([]);
  });

  it("hands the campaigns' keys out in turn, one each, so their jobs alternate in the queue", async () => {
    await campaign("a", 3);
    await campaign("b", 3);
    const handed = await ledger.dispatch(4, 1);
    const campaigns = handed.map((h) => h.campaign);
    expect(campaigns).toHaveLength(4);
    expect(campaigns[0]).not.toBe(campaigns[1]);
    expect(campaigns.slice(2)).toEqual(campaigns.slice(0, 2));
    expect(handed.filter((h) => h.campaign === "a").map((h) => h.key)).toEqual(["k1", "k2"]);
  });

  it("a paused campaign's job gives its order back, unsent, to the front of pending", async () => {
    await campaign("p", 3);
    await ledger.dispatch(10);
    expect(await pauseCampaign(ledger, "p")).toBe(true);
    expect(await pauseCampaign(ledger, "p")).toBe(false);
    expect(await start("p", "k2")).toEqual({ kind: "paused", reason: "paused by operator" });
    expect(await ledger.windowKeys("p")).toEqual(expect.not.arrayContaining(["k2"]));
    expect(await r.redis.lrange(ledger.keys("p").pending, 0, -1)).toEqual(["k2"]);
    expect(await ledger.dispatch(10)).toEqual([]);
    expect((await campaignStatus(ledger, "p")).state).toBe("paused");
    await resumeCampaign(ledger, "p");
    expect(await ledger.dispatch(10)).toEqual([{ campaign: "p", key: "k2" }]);
  });

  it("cancel: unsent rows cancelled, an ambiguous one failed_uncertain, a submitted one left to follow", async () => {
    await campaign("c", 5);
    await ledger.dispatch(3, 1); // k1..k3 in the window, k4 and k5 pending
    await start("c", "k1");
    await ledger.transition("c", "k1", ["in_flight"], "submitted", { order_id: "O-1" });
    await start("c", "k2");
    // A 5xx: back to queued under the same key, an order may exist.
    await ledger.transition("c", "k2", ["in_flight"], "queued", { error_type: "http_503" });
    await cancelCampaign(ledger, "c");
    const status = await campaignStatus(ledger, "c");
    expect(status).toMatchObject({
      state: "cancelled",
      queued: 0,
      submitted: 1,
      cancelled: 3,
      failed_uncertain: 1,
    });
    expect((await ledger.getOrder("c", "k2"))?.error_type).toBe("cancelled_uncertain");
    expect(await ledger.pendingCount("c")).toBe(0);
    // A job still in BullMQ finds nothing to send.
    expect(await start("c", "k3")).toEqual({ kind: "past", status: "cancelled" });
    expect(await ledger.dispatch(10)).toEqual([]);
    // Final: not resumed, approved or retried.
    await expect(resumeCampaign(ledger, "c")).rejects.toThrow(UserError);
    await expect(approveCampaign(ledger, "c")).rejects.toThrow(/is cancelled/);
    await expect(retryCampaign(ledger, "c", {})).rejects.toThrow(/cannot be retried/);
    // The submitted order is still followed to its end; then the campaign is finished.
    await ledger.transition("c", "k1", ["submitted"], "completed");
    const summary = await campaignSummary(ledger, "c");
    expect(summary.finished_at).not.toBeNull();
    expect(summary.money.USD).toMatchObject({ rows: 5, face_value: "50.00", spent: "9.50" });
  });

  it("cancel reaches orders that were in flight on a worker that died, next generations and retries", async () => {
    await campaign("late", 4);
    await ledger.dispatch(10);
    // k1 in flight on a worker that then died; k2 in flight and refused (a 4xx) after the cancel;
    // k3 failed_uncertain, retried under the same key by a retry that checked the state first.
    await start("late", "k1");
    await start("late", "k2");
    await start("late", "k3");
    await ledger.transition("late", "k3", ["in_flight"], "failed_uncertain", {
      error_type: "timeout",
    });
    // Paused first: a cancelled campaign shows no pause any more.
    expect(await pauseCampaign(ledger, "late")).toBe(true);
    await cancelCampaign(ledger, "late");

    expect(await start("late", "k1")).toEqual({ kind: "past", status: "failed_uncertain" });
    expect(await ledger.getOrder("late", "k1")).toMatchObject({
      error_type: "cancelled_uncertain",
    });
    const rekeyed = await ledger.rekey("late", {
      oldKey: "k2",
      newKey: "k2-next",
      identities: ["id2"],
      generation: 1,
      from: ["in_flight"],
    });
    expect(rekeyed).toBe("done");
    expect(await ledger.getOrder("late", "k2-next")).toMatchObject({ status: "cancelled" });
    const retried = await ledger.transition(
      "late",
      "k3",
      ["failed_uncertain"],
      "queued",
      {},
      "pending",
    );
    expect(retried.moved).toBe(false);

    expect(await ledger.pendingCount("late")).toBe(0);
    const status = await campaignStatus(ledger, "late");
    expect(status).toMatchObject({ state: "cancelled", queued: 0, in_flight: 0, paused: null });
    expect(status.cancelled + status.failed_uncertain).toBe(4);
  });

  it("done once nothing is queued, in flight or submitted; spend counts completed orders once", async () => {
    await campaign("d", 2);
    for (const key of ["k1", "k2"]) {
      await start("d", key);
      await ledger.transition("d", key, ["in_flight"], "completed", {});
    }
    await ledger.transition("d", "k2", ["*"], "completed", {});
    const summary = await campaignSummary(ledger, "d");
    expect(summary).toMatchObject({ state: "done", completed: 2 });
    expect(summary.money.USD).toMatchObject({ price: "19.00", spent: "19.00" });
  });

  it("a replayed order is counted", async () => {
    await campaign("rp", 1);
    await start("rp", "k1");
    await ledger.transition("rp", "k1", ["in_flight"], "completed", { replayed: true });
    expect(await campaignStatus(ledger, "rp")).toMatchObject({ completed: 1, replayed: 1 });
  });
});

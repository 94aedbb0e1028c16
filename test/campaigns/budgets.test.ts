import { describe, expect, it } from "vitest";
import { approveCampaign, resumeCampaign } from "../../src/campaigns/control.js";
import { campaignStatus } from "../../src/campaigns/status.js";
import { moneyOf } from "../../src/campaigns/summary.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { ImportRefused } from "../../src/import/import-errors.js";
import { BudgetExceededError } from "../../src/ledger/record-errors.js";
import { budgetUnits } from "../../src/orders/budget.js";
import { depsOf, giftjobs, redisKeys } from "../helpers/campaign-env.js";
import { csvFile, twoCurrencyCsv, validCsv } from "../helpers/csv.js";
import { ledgerOrder, ledgerRow } from "../helpers/ledger-fixtures.js";
import { madeAndPosted } from "../helpers/sandbox.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { eventually, holdsFor } from "../helpers/wait-for.js";

const { setup, work } = useCampaignEnv({ asyncCompleteMs: 50 });

async function refusal(promise: Promise<unknown>): Promise<ImportRefused> {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ImportRefused);
  return error as ImportRefused;
}

describe("--budget per currency", () => {
  it("refuses a budget for a currency the file does not use, a missing one, and two for one", async () => {
    const e = await setup("budget-flags");
    const { text, currencies } = twoCurrencyCsv(e.index, 2);
    const [a, b] = currencies;
    const file = await csvFile(e, "two.csv", text);
    const opts = { file, campaign: "two", balanceCheck: false };

    const wrong = await refusal(
      importCampaign(
        {
          ...opts,
          budget: [`1000:${a}`, "1000:XTS"],
        },
        depsOf(e),
      ),
    );
    expect(wrong.message).toBe(
      `--budget 1000:XTS: the file has no XTS rows (it pays in ${[a, b].sort().join(", ")}); give budgets only for its currencies`,
    );
    const missing = await refusal(importCampaign({ ...opts, budget: [`1000:${a}`] }, depsOf(e)));
    expect(missing.message).toBe(
      `the file pays in ${b} but no --budget is given for it: pass --budget AMOUNT:${b}`,
    );
    const plain = await refusal(importCampaign({ ...opts, budget: ["1000"] }, depsOf(e)));
    expect(plain.message).toMatch(
      /^--budget 1000: the file pays in .*; give a budget per currency/,
    );
    await expect(
      importCampaign(
        {
          ...opts,
          budget: [`1:${a}`, `2:${a}`],
        },
        depsOf(e),
      ),
    ).rejects.toThrow(`--budget 2:${a}: a second budget for ${a}; give one budget per currency`);
    expect(await e.ledger.campaigns.exists("two")).toBe(false);
    expect(await redisKeys(e)).toEqual([]);

    const both = await importCampaign(
      {
        ...opts,
        budget: [`100000:${a}`, `100000.005:${b}`],
      },
      depsOf(e),
    );
    expect(both.enqueued).toBe(4);
    const meta = await e.ledger.campaigns.meta("two");
    expect(meta[`budget:${a}`]).toBe(a === "JPY" ? "100000" : "10000000");
    expect(moneyOf(meta)[b]!.budget).toMatch(/^100000(\.0+)?$/);
  });

  it("on the command line: two budgets for one currency, exit 2, one line", async () => {
    const e = await setup("budget-cli");
    const { text, currency } = validCsv(e.index, 2);
    const file = await csvFile(e, "a.csv", text);
    const run = await giftjobs(e, [
      "orders",
      "import",
      file,
      "--campaign",
      "dup",
      "--yes",
      "--budget",
      `10:${currency}`,
      "--budget",
      `20:${currency.toLowerCase()}`,
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `giftjobs: error: --budget 20:${currency}: a second budget for ${currency}; give one budget per currency\n`,
    );
    expect(await redisKeys(e)).toEqual([]);
  });
});

describe("a stored budget", () => {
  it("holds for appends: recorded + new over it is refused; --budget replaces it", async () => {
    const e = await setup("budget-append");
    const { text, currency } = validCsv(e.index, 6, "b");
    const lines = text.trimEnd().split("\n");
    const first = await csvFile(e, "first.csv", `${lines.slice(0, 4).join("\n")}\n`);
    const all = await csvFile(e, "all.csv", text);
    const dry = await importCampaign({ file: first, campaign: "b", dryRun: true }, depsOf(e));
    const exact = dry.totals[currency]!.price;
    await importCampaign(
      { file: first, campaign: "b", budget: [`${exact}:${currency}`] },
      depsOf(e),
    );
    const total = (await e.ledger.campaigns.counts("b")).total;
    expect(total).toBe(3);

    const over = await refusal(
      importCampaign({ file: all, campaign: "b", append: true }, depsOf(e)),
    );
    expect(over.message).toMatch(
      new RegExp(
        `^the campaign's ${currency} budget ${exact.replace(".", "\\.")}: the campaign costs [\\d.]+ ${currency} \\(${exact.replace(".", "\\.")} recorded before, [\\d.]+ new\\); nothing was enqueued$`,
      ),
    );
    expect((await e.ledger.campaigns.counts("b")).total).toBe(3);

    const allPrice = (
      await importCampaign(
        { file: all, campaign: "x", dryRun: true, allowRepeats: true },
        depsOf(e),
      )
    ).totals[currency]!.price;
    const raised = await importCampaign(
      { file: all, campaign: "b", append: true, budget: [`${allPrice}:${currency}`] },
      depsOf(e),
    );
    expect(raised.enqueued).toBe(3);
    expect(raised.budgets_replaced).toEqual([{ currency, from: exact, to: allPrice }]);
    expect(moneyOf(await e.ledger.campaigns.meta("b"))[currency]!.budget).toBe(allPrice);
  });

  it("a new currency in an append needs a budget when the campaign has one", async () => {
    const e = await setup("budget-newcur");
    const { text, currencies } = twoCurrencyCsv(e.index, 2);
    const [a, b] = currencies;
    const lines = text.trimEnd().split("\n");
    // The first file has only the first currency's rows.
    const first = await csvFile(e, "first.csv", `${lines.slice(0, 3).join("\n")}\n`);
    const all = await csvFile(e, "all.csv", text);
    await importCampaign(
      {
        file: first,
        campaign: "c",
        balanceCheck: false,
        budget: [`100000:${a}`],
      },
      depsOf(e),
    );
    const refused = await refusal(
      importCampaign({ file: all, campaign: "c", append: true, balanceCheck: false }, depsOf(e)),
    );
    expect(refused.message).toBe(
      `the file pays in ${b} but campaign c has no budget for it: pass --budget AMOUNT:${b}`,
    );
  });

  it("two appends at once cannot both pass it: RECORD checks and adds in one step", async () => {
    const e = await setup("budget-race");
    const { text, currency } = validCsv(e.index, 1, "r");
    const file = await csvFile(e, "one.csv", text);
    await importCampaign({ file, campaign: "race", budget: [`100000:${currency}`] }, depsOf(e));
    const planned = BigInt((await e.ledger.campaigns.meta("race"))[`planned_price:${currency}`]!);
    // Room for one more order of 600 units, not two.
    await e.ledger.campaigns.setMeta("race", { [`budget:${currency}`]: String(planned + 1000n) });
    const batch = (n: number): Parameters<typeof e.ledger.orders.record> => {
      const identity = `race-${n}`;
      const order = ledgerOrder("race", [identity], { currency, face: "600", price: "600" });
      const row = ledgerRow(n, { face_value: "6.00", currency });
      return ["race", [{ order, rows: [[identity, row]] }]];
    };
    const results = await Promise.allSettled([
      e.ledger.orders.record(...batch(1)),
      e.ledger.orders.record(...batch(2)),
    ]);
    const passed = results.filter((r) => r.status === "fulfilled");
    const refused = results.filter((r) => r.status === "rejected");
    expect(passed).toHaveLength(1);
    expect(refused).toHaveLength(1);
    const error = (refused[0] as PromiseRejectedResult).reason;
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect(error).toMatchObject({
      currency,
      planned: planned + 600n,
      batch: 600n,
      budget: planned + 1000n,
    });
    const meta = await e.ledger.campaigns.meta("race");
    expect(meta[`planned_price:${currency}`]).toBe(String(planned + 600n));
    expect((await e.ledger.campaigns.counts("race")).total).toBe(2);
    expect(await e.ledger.dispatch.pendingCount("race")).toBe(2);
  });

  it("an import whose batch RECORD refuses is an ImportRefused", async () => {
    const e = await setup("budget-record");
    const { text, currency } = validCsv(e.index, 3, "s");
    const file = await csvFile(e, "a.csv", text);
    await importCampaign(
      {
        file,
        campaign: "s",
        confirm: async () => {
          // Another import takes the budget between pass 1 and pass 2.
          await e.ledger.campaigns.register("s", { state: "running" });
          // What another import recorded: all but one minor unit of the budget.
          await e.ledger.campaigns.setMeta("s", {
            [`planned_price:${currency}`]: String(budgetUnits("100000", currency) - 1n),
          });

          return true;
        },
        budget: [`100000:${currency}`],
      },
      depsOf(e),
    ).then(
      () => expect.unreachable(),
      (error: unknown) => {
        expect(error).toBeInstanceOf(ImportRefused);
        expect((error as Error).message).toMatch(
          new RegExp(`^the campaign's ${currency} budget 100000(\\.0+)? would be passed: `),
        );
      },
    );
    expect((await e.ledger.campaigns.counts("s")).total).toBe(0);
  });
});

describe("the send-time check", () => {
  it("pauses a campaign whose planned price is over its budget; nothing is sent", async () => {
    const e = await setup("budget-send");
    const { text, currency } = validCsv(e.index, 3, "p");
    const file = await csvFile(e, "a.csv", text);
    await importCampaign(
      { file, campaign: "p", hold: true, budget: [`100000:${currency}`] },
      depsOf(e),
    );
    const planned = (await e.ledger.campaigns.meta("p"))[`planned_price:${currency}`]!;
    // The budget lowered under what is planned (the importer cannot do it; an operator could).
    await e.ledger.campaigns.setMeta("p", { [`budget:${currency}`]: String(BigInt(planned) - 1n) });
    await approveCampaign(e.ledger, "p");
    await work(e);
    await eventually(
      async () => (await e.ledger.campaigns.meta("p")).state === "paused",
      "campaign paused",
    );
    const reason = (await e.ledger.campaigns.meta("p")).paused_reason!;
    expect(reason).toMatch(
      new RegExp(`^budget_exceeded: ${currency} planned [\\d.]+ is over the budget of [\\d.]+$`),
    );
    await holdsFor(
      async () => (await madeAndPosted(e.sandbox)).posts === 0,
      300,
      "the paused campaign sends nothing",
    );
    const status = await campaignStatus(e.ledger, "p");
    expect(status).toMatchObject({ queued: 3, in_flight: 0, completed: 0 });
    expect(
      (await e.ledger.dispatch.windowOrders("p")).length +
        (await e.ledger.dispatch.pendingCount("p")),
    ).toBe(3);

    await e.ledger.campaigns.setMeta("p", { [`budget:${currency}`]: planned });
    await resumeCampaign(e.ledger, "p");
    await eventually(
      async () => (await campaignStatus(e.ledger, "p")).completed === 3,
      "3 completed",
    );
  });

  it("START answers paused with the budget, and gives the order back", async () => {
    const e = await setup("budget-start");
    const { text, currency } = validCsv(e.index, 1, "q");
    const file = await csvFile(e, "a.csv", text);
    await importCampaign({ file, campaign: "q", budget: [`100000:${currency}`] }, depsOf(e));
    const [key] = await e.redis.lrange(e.ledger.keys("q").pending, 0, -1);
    await e.ledger.campaigns.setMeta("q", { [`budget:${currency}`]: "0" });
    const started = await e.ledger.orders.start({ campaign: "q", number: Number(key), patch: {} });
    expect(started).toMatchObject({ kind: "paused", budget: true });
    expect((await e.ledger.orders.getOrder("q", Number(key)))!.status).toBe("queued");
    expect(await e.ledger.campaigns.meta("q")).toMatchObject({ state: "paused" });
    expect(await e.redis.lrange(e.ledger.keys("q").pending, 0, -1)).toEqual([key]);
  });
});

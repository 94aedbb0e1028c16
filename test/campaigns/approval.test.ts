import { describe, expect, it } from "vitest";
import { approveCampaign } from "../../src/campaigns/control.js";
import { campaignStatus } from "../../src/campaigns/status.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { ImportDeclined, ImportRefused } from "../../src/import/import-errors.js";
import type { SpendPlan } from "../../src/import/import-types.js";
import { type CampaignEnv, depsOf, giftjobs, redisKeys } from "../helpers/campaign-env.js";
import { csvFile, validCsv } from "../helpers/csv.js";
import { madeAndPosted } from "../helpers/sandbox.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { eventually, holdsFor } from "../helpers/wait-for.js";

const { setup, work } = useCampaignEnv({ asyncCompleteMs: 50 });

const completed = (e: CampaignEnv, campaign: string, n: number) =>
  eventually(
    async () => (await campaignStatus(e.ledger, campaign)).completed === n,
    `${n} completed rows in ${campaign}`,
  );

describe("a held campaign", () => {
  it("sends nothing until approved, while a running one beside it completes", async () => {
    const e = await setup("held");
    const held = await csvFile(e, "held.csv", validCsv(e.index, 6, "h").text);
    const control = await csvFile(e, "control.csv", validCsv(e.index, 4, "c").text);
    const result = await importCampaign({ file: held, campaign: "held", hold: true }, depsOf(e));
    expect(result).toMatchObject({ enqueued: 6, state: "held" });
    await importCampaign({ file: control, campaign: "control" }, depsOf(e));

    await work(e);
    // The running campaign proves the workers and the dispatcher were at work meanwhile.
    await completed(e, "control", 4);
    await holdsFor(
      async () => (await madeAndPosted(e.sandbox)).posts === 4,
      300,
      "the held campaign sends nothing",
    );
    const before = await madeAndPosted(e.sandbox);
    expect(before.made).toHaveLength(4);
    expect(before.posts).toBe(4);
    const status = await campaignStatus(e.ledger, "held");
    expect(status).toMatchObject({ state: "held", queued: 6, in_flight: 0, completed: 0 });

    await approveCampaign(e.ledger, "held");
    await completed(e, "held", 6);
    expect((await madeAndPosted(e.sandbox)).made).toHaveLength(10);
  });

  it("--hold on an append makes a running campaign held before its new rows are recorded", async () => {
    const e = await setup("append-hold");
    const { text } = validCsv(e.index, 5, "a");
    const three = `${text.trimEnd().split("\n").slice(0, 4).join("\n")}\n`;
    const first = await csvFile(e, "first.csv", three);
    const all = await csvFile(e, "all.csv", text);
    expect((await importCampaign({ file: first, campaign: "grow" }, depsOf(e))).state).toBe(
      "running",
    );
    const appended = await importCampaign(
      { file: all, campaign: "grow", append: true, hold: true },
      depsOf(e),
    );
    expect(appended).toMatchObject({ enqueued: 2, already_known: 3, state: "held" });
    expect((await e.ledger.campaigns.meta("grow")).state).toBe("held");

    const control = await csvFile(e, "control.csv", validCsv(e.index, 2, "c").text);
    await importCampaign({ file: control, campaign: "control" }, depsOf(e));
    await work(e);
    await completed(e, "control", 2);
    await holdsFor(
      async () => (await madeAndPosted(e.sandbox)).made.length === 2,
      300,
      "the held campaign sends nothing",
    );
    // Its earlier rows wait too: held means nothing of the campaign is sent.
    expect((await madeAndPosted(e.sandbox)).made).toHaveLength(2);
    expect(await campaignStatus(e.ledger, "grow")).toMatchObject({ queued: 5, completed: 0 });
    await approveCampaign(e.ledger, "grow");
    await completed(e, "grow", 5);
  });

  it("a re-import with no new rows and --hold leaves a running campaign running", async () => {
    const e = await setup("rerun-hold");
    const file = await csvFile(e, "a.csv", validCsv(e.index, 3, "r").text);
    await importCampaign({ file, campaign: "rerun" }, depsOf(e));
    const again = await importCampaign({ file, campaign: "rerun", hold: true }, depsOf(e));
    expect(again).toMatchObject({ enqueued: 0, already_known: 3, state: "running" });
    expect((await e.ledger.campaigns.meta("rerun")).state).toBe("running");
  });
});

describe("confirm", () => {
  it("is asked after pass 1 with the new rows' cost; no records nothing", async () => {
    const e = await setup("confirm");
    const { text, currency } = validCsv(e.index, 4, "q");
    const file = await csvFile(e, "a.csv", text);
    const plans: SpendPlan[] = [];
    const error = await importCampaign(
      {
        file,
        campaign: "asked",
        confirm: async (plan) => {
          plans.push(plan);
          // Pass 2 has not begun: nothing of the campaign is in Redis yet, only the importer's
          // day counting its rows (so that an import beside it sees them), given back on "no".
          const day = expect.stringMatching(/:imported-today:\d{4}-\d\d-\d\d$/);
          expect(await redisKeys(e)).toEqual([day]);
          return false;
        },
      },
      depsOf(e),
    ).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ImportDeclined);
    expect((error as ImportDeclined).exitCode).toBe(1);
    expect(plans).toHaveLength(1);
    const dry = await importCampaign({ file, campaign: "asked", dryRun: true }, depsOf(e));
    expect(plans[0]).toEqual({
      campaign: "asked",
      rows: 4,
      totals: { [currency]: dry.totals[currency] },
      pricing: { by: "service" },
      held: false,
    });
    expect(await e.ledger.campaigns.exists("asked")).toBe(false);
    expect(await redisKeys(e)).toEqual([]);

    const yes = await importCampaign(
      { file, campaign: "asked", confirm: async () => true },
      depsOf(e),
    );
    expect(yes).toMatchObject({ enqueued: 4, state: "running" });
  });

  it("is not asked on a dry run, with no new rows, or when a check refuses the file", async () => {
    const e = await setup("no-confirm");
    const { text, currency } = validCsv(e.index, 3, "n");
    const file = await csvFile(e, "a.csv", text);
    let asked = 0;
    const confirm = async () => {
      asked += 1;
      return true;
    };
    await importCampaign({ file, campaign: "n", dryRun: true, confirm }, depsOf(e));
    expect(asked).toBe(0);
    const over = await importCampaign(
      { file, campaign: "n", confirm, budget: [`0.01:${currency}`] },
      depsOf(e),
    ).catch((err: unknown) => err);
    expect(over).toBeInstanceOf(ImportRefused);
    expect(asked).toBe(0);
    await importCampaign({ file, campaign: "n", confirm }, depsOf(e));
    expect(asked).toBe(1);
    await importCampaign({ file, campaign: "n", confirm }, depsOf(e));
    expect(asked).toBe(1);
  });
});

describe("orders import without a terminal", () => {
  it("needs --yes or --hold: exit 2, one line, nothing recorded", async () => {
    const e = await setup("no-tty");
    const file = await csvFile(e, "a.csv", validCsv(e.index, 3, "t").text);
    const run = await giftjobs(e, ["orders", "import", file, "--campaign", "tty"]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(
      "giftjobs: error: campaign tty: 3 new rows to spend on and no terminal to ask: pass --yes to import and send them, or --hold to record the campaign held until `orders approve`; nothing was recorded\n",
    );
    expect(await redisKeys(e)).toEqual([]);

    const held = await giftjobs(e, [
      "orders",
      "import",
      file,
      "--campaign",
      "tty",
      "--hold",
      "--json",
    ]);
    expect(held.code).toBe(0);
    expect(JSON.parse(held.stdout)).toMatchObject({ enqueued: 3, state: "held" });
    expect((await e.ledger.campaigns.meta("tty")).state).toBe("held");

    // The re-run of the same file has nothing to spend: no --yes needed.
    const again = await giftjobs(e, ["orders", "import", file, "--campaign", "tty", "--json"]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ enqueued: 0, state: "held" });

    const sent = await giftjobs(e, [
      "orders",
      "import",
      file,
      "--campaign",
      "tty2",
      "--yes",
      "--json",
      // The same rows as tty's: paid again, knowingly.
      "--allow-repeats",
    ]);
    expect(sent.code).toBe(0);
    expect(JSON.parse(sent.stdout)).toMatchObject({ enqueued: 3, state: "running" });
  });

  it("GIFTJOBS_REQUIRE_APPROVAL=1 holds every import, even with --yes, and says so", async () => {
    const e = await setup("require");
    const file = await csvFile(e, "a.csv", validCsv(e.index, 3, "m").text);
    const run = await giftjobs(
      e,
      ["orders", "import", file, "--campaign", "must", "--yes", "--json"],
      { GIFTJOBS_REQUIRE_APPROVAL: "1" },
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ enqueued: 3, state: "held" });
    expect(run.stderr).toBe(
      "GIFTJOBS_REQUIRE_APPROVAL is set: campaign must is held even with --yes; send it with `giftjobs orders approve --campaign must`\n",
    );
    expect((await e.ledger.campaigns.meta("must")).state).toBe("held");

    // Without --yes or a terminal: held as well, nothing to ask.
    const bare = await giftjobs(
      e,
      ["orders", "import", file, "--campaign", "must2", "--allow-repeats"],
      {
        GIFTJOBS_REQUIRE_APPROVAL: "1",
      },
    );
    expect(bare.code).toBe(0);
    expect(bare.stdout).toContain(
      "held: nothing is sent until `giftjobs orders approve --campaign must2`",
    );
    expect((await e.ledger.campaigns.meta("must2")).state).toBe("held");

    const off = await giftjobs(
      e,
      ["orders", "import", file, "--campaign", "free", "--yes", "--allow-repeats"],
      {
        GIFTJOBS_REQUIRE_APPROVAL: "0",
      },
    );
    expect(off.code).toBe(0);
    expect((await e.ledger.campaigns.meta("free")).state).toBe("running");
  });
});

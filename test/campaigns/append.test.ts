import { afterEach, describe, expect, it } from "vitest";
import { cancelCampaign } from "../../src/campaigns/control.js";
import { UserError } from "../../src/errors/user-error.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { ImportRefused } from "../../src/import/import-errors.js";
import { type CampaignEnv, campaignEnv, depsOf, giftjobs } from "../helpers/campaign-env.js";
import { csvFile, validCsv } from "../helpers/csv.js";

let env: CampaignEnv | undefined;

afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

async function setup(label: string): Promise<CampaignEnv> {
  env = await campaignEnv({}, label);
  return env;
}

/** The first `rows` rows of a file of 5, and the whole file. */
async function twoFiles(e: CampaignEnv, rows: number): Promise<{ part: string; all: string }> {
  const { text } = validCsv(e.index, 5, "ap");
  const lines = text.trimEnd().split("\n");
  return {
    part: await csvFile(e, "part.csv", `${lines.slice(0, rows + 1).join("\n")}\n`),
    all: await csvFile(e, "all.csv", text),
  };
}

describe("appending to a campaign", () => {
  it("counts one row as a row: 'exists (1 row)', 'has 1 new row'", async () => {
    const e = await setup("append-one");
    const { text } = validCsv(e.index, 2, "one");
    const lines = text.trimEnd().split("\n");
    const first = await csvFile(e, "first.csv", `${lines.slice(0, 2).join("\n")}\n`);
    const both = await csvFile(e, "both.csv", text);
    await importCampaign({ file: first, campaign: "one" }, depsOf(e));
    const refused = await importCampaign({ file: both, campaign: "one" }, depsOf(e)).catch(
      (error: unknown) => error,
    );
    expect((refused as Error).message).toMatch(
      /^campaign one exists \(1 row\); this file has 1 new row: pass --append/,
    );
  });

  it("new rows need --append; the same rows again need nothing", async () => {
    const e = await setup("append");
    const { part, all } = await twoFiles(e, 3);
    await importCampaign({ file: part, campaign: "grow" }, depsOf(e));
    const refused = await importCampaign({ file: all, campaign: "grow" }, depsOf(e)).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(ImportRefused);
    expect((refused as Error).message).toBe(
      "campaign grow exists (3 rows); this file has 2 new rows: pass --append to add them to it (the rows it has are not added again)",
    );
    expect((await e.ledger.counts("grow")).total).toBe(3);
    expect(await e.ledger.pendingCount("grow")).toBe(3);

    const rerun = await importCampaign({ file: part, campaign: "grow" }, depsOf(e));
    expect(rerun).toMatchObject({ enqueued: 0, already_known: 3 });
    const appended = await importCampaign({ file: all, campaign: "grow", append: true }, depsOf(e));
    expect(appended).toMatchObject({ enqueued: 2, already_known: 3 });
    expect((await e.ledger.counts("grow")).total).toBe(5);
  });

  it("on the command line: exit 2, one line, nothing added", async () => {
    const e = await setup("append-cli");
    const { part, all } = await twoFiles(e, 2);
    const first = await giftjobs(e, ["orders", "import", part, "--campaign", "c", "--yes"]);
    expect(first.code).toBe(0);
    const run = await giftjobs(e, ["orders", "import", all, "--campaign", "c", "--yes"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      "giftjobs: error: campaign c exists (2 rows); this file has 3 new rows: pass --append to add them to it (the rows it has are not added again)\n",
    );
    expect((await e.ledger.counts("c")).total).toBe(2);
    const ok = await giftjobs(e, [
      "orders",
      "import",
      all,
      "--campaign",
      "c",
      "--yes",
      "--append",
      "--json",
    ]);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({
      enqueued: 3,
      already_known: 2,
      state: "running",
    });
  });

  it("a cancelled or an archived campaign takes no rows, --append or not", async () => {
    const e = await setup("closed");
    const { part, all } = await twoFiles(e, 2);
    await importCampaign({ file: part, campaign: "gone" }, depsOf(e));
    await cancelCampaign(e.ledger, "gone");
    for (const append of [false, true]) {
      const error = await importCampaign({ file: all, campaign: "gone", append }, depsOf(e)).catch(
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(UserError);
      expect((error as Error).message).toBe(
        "campaign gone is cancelled: no rows can be added to it; a cancelled campaign stays cancelled; to pay its rows after all, import them under a new name (rows it paid are refused as repeats)",
      );
    }
    expect((await e.ledger.counts("gone")).total).toBe(2);

    await importCampaign({ file: part, campaign: "old" }, depsOf(e));
    await e.ledger.setState("old", "archived", ["*"]);
    const run = await giftjobs(e, [
      "orders",
      "import",
      all,
      "--campaign",
      "old",
      "--yes",
      "--append",
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      "giftjobs: error: campaign old is archived: no rows can be added to it; `giftjobs orders restore --campaign old` brings it back, then import with --append\n",
    );
    expect((await e.ledger.counts("old")).total).toBe(2);
  });

  it("RECORD itself refuses rows for a cancelled campaign (cancelled during an import)", async () => {
    const e = await setup("closed-record");
    const { part, all } = await twoFiles(e, 2);
    await importCampaign({ file: part, campaign: "mid" }, depsOf(e));
    const error = await importCampaign(
      {
        file: all,
        campaign: "mid",
        append: true,
        confirm: async () => {
          await cancelCampaign(e.ledger, "mid");
          return true;
        },
      },
      depsOf(e),
    ).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ImportRefused);
    expect((error as Error).message).toBe(
      "campaign mid was cancelled during the import; nothing was enqueued",
    );
    expect((await e.ledger.counts("mid")).total).toBe(2);
  });
});

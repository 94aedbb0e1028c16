// One meaning of "done" (docs/concepts.md, "Done"): rows at an end, completed, failed and
// cancelled shown apart, in orders status, orders list (text and JSON), the lifecycle commands'
// summary and the bars; `--hold` says "recorded, held"; a repeated cancel says "already
// cancelled". Real Redis, sandbox over HTTP, workers, the CLI as a child process.
import { describe, expect, it } from "vitest";
import { progressCells, type RowProgress, rowProgress } from "../../src/campaigns/progress.js";
import { campaignStatus } from "../../src/campaigns/status.js";
import { type CampaignEnv, giftjobs } from "../helpers/campaign-env.js";
import { csvFile, validCsv } from "../helpers/csv.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { eventually } from "../helpers/wait-for.js";

const envs = useCampaignEnv();

function progress(parts: Partial<RowProgress>): RowProgress {
  const p = { completed: 0, failed: 0, cancelled: 0, pending: 0, ...parts };
  const total = p.completed + p.failed + p.cancelled + p.pending;
  return { ...p, total, done: total - p.pending };
}

/** The bar's cells, as a reader sees them. */
const BAR_CELLS = { completed: "█", failed: "x", cancelled: "-", pending: "░" } as const;

const count = (cells: string, part: keyof typeof BAR_CELLS) =>
  [...cells].filter((c) => c === BAR_CELLS[part]).length;

/** The cells of one column of `orders list`'s table for `campaign`. */
function listCells(table: string, campaign: string): Record<string, string> {
  const [head, ...rows] = table.trimEnd().split("\n");
  const names = head!.split(/\s{2,}/);
  const row = rows.find((line) => line.startsWith(`${campaign} `))!.split(/\s{2,}/);
  return Object.fromEntries(names.map((name, i) => [name, row[i] ?? ""]));
}

async function importFile(env: CampaignEnv, campaign: string, rows: number, flag: string) {
  const file = await csvFile(env, `${campaign}.csv`, validCsv(env.index, rows).text);
  const run = await giftjobs(env, ["orders", "import", file, "--campaign", campaign, flag]);
  expect(run.code, run.stderr).toBe(0);
  return run;
}

describe("done: rows at an end, their parts apart", () => {
  it("a bar never reads complete unless every row completed", () => {
    const cancelled = progressCells(progress({ completed: 91, cancelled: 209 }), 30);
    expect(cancelled).toHaveLength(30);
    expect(count(cancelled, "completed")).toBe(9);
    expect(count(cancelled, "cancelled")).toBe(21);
    // One failed row of a thousand still shows; the completed part is then not the whole bar.
    const oneFailed = progressCells(progress({ completed: 999, failed: 1 }), 30);
    expect(count(oneFailed, "failed")).toBe(1);
    expect(count(oneFailed, "completed")).toBe(29);
    expect(progressCells(progress({ completed: 5 }), 30)).toBe(BAR_CELLS.completed.repeat(30));
    expect(progressCells(progress({ pending: 5 }), 10)).toBe(BAR_CELLS.pending.repeat(10));
    const waiting = progressCells(progress({ completed: 1, pending: 2, cancelled: 1 }), 8);
    expect(waiting).toBe("██--░░░░");
  });

  it("--hold says recorded, held; status, list and a repeated cancel use one meaning of done", async () => {
    const env = await envs.setup("done-views");
    const held = await importFile(env, "held", 4, "--hold");
    expect(held.stdout).toContain(
      "4 new, 0 already known; 4 orders recorded, held: nothing is sent until `giftjobs orders approve --campaign held`",
    );
    expect(held.stdout).not.toContain("enqueued");

    const cancel = await giftjobs(env, ["orders", "cancel", "--campaign", "held"]);
    expect(cancel.code).toBe(0);
    expect(cancel.stdout.split("\n")[0]).toBe(
      "campaign held cancelled: 4 rows cancelled (4 orders taken off the pending list); no new order will be created",
    );
    expect(cancel.stdout).toContain(
      "  cancelled: 4 of 4 rows done: 0 completed, 0 failed, 4 cancelled",
    );
    const again = await giftjobs(env, ["orders", "cancel", "--campaign", "held"]);
    expect(again.code).toBe(0);
    const { cancelled_at } = await env.ledger.campaigns.meta("held");
    expect(again.stdout.split("\n")[0]).toBe(
      `campaign held is already cancelled (since ${cancelled_at})`,
    );
    expect(again.stdout).not.toContain("rows cancelled");

    const status = await giftjobs(env, ["orders", "status", "--campaign", "held"]);
    expect(status.stdout.split("\n")[0]).toBe(
      "campaign held (cancelled): 4 of 4 rows done: 0 completed, 0 failed, 4 cancelled",
    );

    // A campaign the workers complete: done and completed agree there, and only there.
    await importFile(env, "sent", 3, "--yes");
    await envs.work(env);
    await eventually(
      async () => (await campaignStatus(env.ledger, "sent")).completed === 3,
      "sent completed",
    );
    const sent = await giftjobs(env, ["orders", "status", "--campaign", "sent"]);
    expect(sent.stdout.split("\n")[0]).toBe(
      "campaign sent (done): 3 of 3 rows done: 3 completed, 0 failed, 0 cancelled",
    );

    const table = (await giftjobs(env, ["orders", "list"])).stdout;
    expect(listCells(table, "held")).toMatchObject({
      STATE: "cancelled",
      ROWS: "4",
      DONE: "4",
      COMPLETED: "0",
      FAILED: "0",
      CANCELLED: "4",
    });
    expect(listCells(table, "sent")).toMatchObject({ DONE: "3", COMPLETED: "3", CANCELLED: "0" });
    const json = JSON.parse((await giftjobs(env, ["orders", "list", "--json"])).stdout) as {
      campaign: string;
      done: number;
      completed: number;
      cancelled: number;
    }[];
    const byName = Object.fromEntries(json.map((c) => [c.campaign, c]));
    expect(byName.held).toMatchObject({ done: 4, completed: 0, cancelled: 4 });
    expect(byName.sent).toMatchObject({ done: 3, completed: 3, cancelled: 0 });
    expect(Object.keys(byName.held!).at(-1)).toBe("stalled");

    // The bar of the cancelled campaign, as status --wait draws it: no completed cell.
    const bar = progressCells(rowProgress(await campaignStatus(env.ledger, "held")), 30);
    expect(bar).toBe(BAR_CELLS.cancelled.repeat(30));
    // Each command is a child process: ten of them on a busy machine.
  }, 300_000);
});

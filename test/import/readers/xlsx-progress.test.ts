import { stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { importCampaign } from "../../../src/import/import-campaign.js";
import type { ImportProgress } from "../../../src/import/import-types.js";
import { type CampaignEnv, campaignEnv, depsOf } from "../../helpers/campaign-env.js";
import { writeLargeCsv } from "../../helpers/csv.js";
import { writeLargeXlsx } from "../../helpers/xlsx.js";

let env: CampaignEnv | undefined;

afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

async function setup(): Promise<CampaignEnv> {
  env = await campaignEnv({}, "xlsx-progress");
  return env;
}

const ROWS = 6000;

/** The progress events of an import of `file`, and the file's size (the bar's validate total). */
async function progressOf(
  e: CampaignEnv,
  file: string,
  campaign: string,
): Promise<{ events: ImportProgress[]; size: number }> {
  const events: ImportProgress[] = [];
  const onProgress = (p: ImportProgress) => events.push({ ...p });
  // The same rows in both campaigns: the second pays them again, knowingly.
  const options = { file, campaign, onProgress, allowRepeats: true };
  const result = await importCampaign(options, depsOf(e));
  expect(result.enqueued).toBe(ROWS);
  return { events, size: (await stat(file)).size };
}

/** What a bar made of the events shows: validate moves through the file, enqueue to its total. */
function expectMovingBars(events: ImportProgress[], size: number): void {
  const validate = events.filter((p) => p.phase === "validate").map((p) => p.bytes);
  expect(validate.length).toBeGreaterThanOrEqual(ROWS / 500 - 1);
  // Neither still at 0 nor full from the first batch: it moves with the rows read.
  expect(validate[0]).toBeGreaterThan(0);
  expect(validate[0]).toBeLessThan(size / 2);
  for (let i = 1; i < validate.length; i++)
    expect(validate[i]).toBeGreaterThanOrEqual(validate[i - 1]!);
  expect(new Set(validate).size).toBeGreaterThanOrEqual(validate.length / 2);
  expect(validate.at(-1)).toBeGreaterThan(size * 0.7);
  expect(validate.at(-1)).toBeLessThanOrEqual(size);
  const enqueue = events.filter((p) => p.phase === "enqueue");
  expect(enqueue.length).toBeGreaterThan(1);
  expect(enqueue.every((p) => p.toEnqueue === ROWS)).toBe(true);
  expect(enqueue[0]!.enqueued).toBeLessThan(ROWS);
  expect(enqueue.at(-1)!.enqueued).toBe(ROWS);
}

describe("import progress of an .xlsx workbook", () => {
  it("moves through the file as the sheet is read, as a CSV's does, then through the rows recorded", async () => {
    const e = await setup();
    const xlsx = join(e.dataDir, "orders.xlsx");
    await writeLargeXlsx(e.index, xlsx, ROWS, { referencePrefix: "x-" });
    const fromXlsx = await progressOf(e, xlsx, "from-xlsx");
    expectMovingBars(fromXlsx.events, fromXlsx.size);

    const csv = join(e.dataDir, "orders.csv");
    await writeLargeCsv(e.index, csv, ROWS, { referencePrefix: "c-" });
    const fromCsv = await progressOf(e, csv, "from-csv");
    expectMovingBars(fromCsv.events, fromCsv.size);
  });
});

import { createReadStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import type { Response } from "express";
import { writeReport } from "../campaigns/report.js";
import type { Ledger } from "../ledger/ledger.js";

/**
 * Sends the campaign's report as an attachment: the very file `orders report` writes
 * (writeReport, into a private temporary folder, removed after), so the two cannot differ.
 */
export async function sendReport(ledger: Ledger, campaign: string, res: Response): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "giftjobs-report-"));
  try {
    const file = join(dir, "report.csv");
    await writeReport(ledger, campaign, file);
    res.attachment(`${campaign}-report.csv`);
    res.type("text/csv; charset=utf-8");
    res.set("Cache-Control", "no-store");
    await pipeline(createReadStream(file), res);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

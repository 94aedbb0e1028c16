// Campaigns of link rows, recipient rows and choice rows (MULTIPLE and TEMPLATE), end to end
// against the sandbox through the workers; and the payout links, money in the open: kept only
// with --store-payout-urls, written only by `orders links` (a new 0600 file), never in the
// report, the worker's log or the dashboard.
import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { writePayoutLinks } from "../../src/campaigns/payout-links.js";
import { writeReport } from "../../src/campaigns/report.js";
import { campaignStatus } from "../../src/campaigns/status.js";
import type { CatalogIndexEntry } from "../../src/catalog/index-entry.js";
import { startDashboard } from "../../src/dashboard/start-dashboard.js";
import { UserError } from "../../src/errors/user-error.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { ImportRefused } from "../../src/import/import-errors.js";
import { createLogger } from "../../src/log.js";
import { type CampaignEnv, depsOf, giftjobs } from "../helpers/campaign-env.js";
import { sandboxOrders } from "../helpers/sandbox.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { eventually } from "../helpers/wait-for.js";

const REDEEM = "redeem.sandbox.invalid";

/** Every line a logger writes, at debug level. */
function capturedLog() {
  let text = "";
  const destination = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return { log: createLogger({ level: "debug", destination }), text: () => text };
}

const orderable = (e: CatalogIndexEntry) =>
  e.is_orderable && e.state === "LIVE" && e.denominations?.type === "open" && !e.plan_of;

/** Two open gift cards of one currency, a face value both take, and an open payment product. */
function products(env: CampaignEnv) {
  const entries = Object.values(env.index.entries).filter(orderable);
  const cards = entries.filter((e) => e.payout_type === "gift_card");
  const currency = cards.find((e) => cards.filter((c) => c.currency === e.currency).length > 1);
  const pair = cards.filter((e) => e.currency === currency?.currency).slice(0, 2);
  const open = (e: CatalogIndexEntry) => e.denominations as { min: string; max: string };
  const face = Math.ceil(Math.max(...pair.map((e) => Number(open(e).min))));
  const payment = entries.find((e) => e.payout_type === "payment")!;
  expect(pair).toHaveLength(2);
  expect(payment).toBeDefined();
  return { pair, face, currency: pair[0]!.currency, payment, paymentFace: open(payment).min };
}

async function finished(env: CampaignEnv, campaign: string, rows: number) {
  await eventually(
    async () => (await campaignStatus(env.ledger, campaign)).completed === rows,
    `${rows} completed rows of ${campaign}`,
  );
}

describe("distribution and choice campaigns end to end", () => {
  const envs = useCampaignEnv({ asyncCompleteMs: 100 });

  it("pays link, recipient and choice rows; links go only to the links file", async () => {
    const env = await envs.setup("dist");
    const { pair, face, currency, payment, paymentFace } = products(env);
    const [a, b] = pair.map((e) => e.code);
    env.sandbox.state.book.selectionTemplates.replace({ "PT-GJ": [a!, b!] });
    const deps = depsOf(env);
    const file = (name: string, text: string) => {
      const path = join(env.dataDir, name);
      return writeFile(path, text).then(() => path);
    };

    // Link rows: two say so, the third takes --distribution link; packed two to an order.
    const links = await file(
      "links.csv",
      `product_code,face_value,reference,distribution\n${a},${face},L-1,link\n` +
        `${b},${face},L-2,LINK\n${a},${face},L-3,\n`,
    );
    await importCampaign(
      { file: links, campaign: "links", distribution: "link", itemsPerOrder: 2 },
      deps,
    );
    const recipients = await file(
      "recipients.csv",
      "email,product_code,face_value,distribution,recipient_reference\n" +
        `ann@example.com,${payment.code},${paymentFace},recipient,emp-1\n` +
        `bob@example.com,${payment.code},${paymentFace},recipient,emp.2@acme\n`,
    );
    await importCampaign({ file: recipients, campaign: "recipients" }, deps);
    const choices = await file(
      "choices.csv",
      "email,product_codes,selection_template_id,currency,face_value\n" +
        `cy@example.com,${a}|${b},,,${face}\ndee@example.com,,PT-GJ,${currency},${face}\n`,
    );
    await importCampaign({ file: choices, campaign: "choices", itemsPerOrder: 2 }, deps);

    const { log, text } = capturedLog();
    await envs.work(env, { log, storePayoutUrls: true });
    await finished(env, "links", 3);
    await finished(env, "recipients", 2);
    await finished(env, "choices", 2);

    const items = (await sandboxOrders(env.sandbox)).flatMap(
      (o) => (o as unknown as { items: Record<string, Record<string, unknown>>[] }).items,
    );
    const kinds = items.map((i) => `${i.distribution_method!.type} ${i.products!.type}`).sort();
    expect(kinds).toEqual([
      "EMAIL MULTIPLE",
      "EMAIL TEMPLATE",
      "PAYOUT_LINK SINGLE",
      "PAYOUT_LINK SINGLE",
      "PAYOUT_LINK SINGLE",
      "RECIPIENT SINGLE",
      "RECIPIENT SINGLE",
    ]);
    const references = items.map((i) => i.distribution_method!.recipient_reference).filter(Boolean);
    expect(references.sort()).toEqual(["emp-1", "emp.2@acme"]);
    const template = items.find((i) => i.products!.type === "TEMPLATE")!;
    expect(template.products).toEqual({ type: "TEMPLATE", template_id: "PT-GJ", values: [a, b] });

    // The links file: the three link rows, 0600, never overwritten.
    const out = join(env.dataDir, "links-out.csv");
    const written = await writePayoutLinks(env.ledger, "links", out);
    expect(written).toMatchObject({ rows: 3, without_url: 0 });
    expect((await stat(out)).mode & 0o777).toBe(0o600);
    const lines = (await readFile(out, "utf8")).trim().split("\n");
    expect(lines[0]).toBe("line,reference,email,url,expiry");
    expect(lines.slice(1).map((l) => l.split(",").slice(0, 3).join(","))).toEqual([
      "2,L-1,",
      "3,L-2,",
      "4,L-3,",
    ]);
    const urls = lines.slice(1).map((l) => l.split(",")[3]!);
    for (const url of urls) expect(url).toContain(REDEEM);
    for (const l of lines.slice(1)) expect(Date.parse(l.split(",")[4]!)).toBeGreaterThan(0);
    await expect(writePayoutLinks(env.ledger, "links", out)).rejects.toThrow(UserError);
    await expect(writePayoutLinks(env.ledger, "links", out)).rejects.toThrow(/never overwritten/);

    // The CLI: a new file, 0600; the same file again is refused, exit 2.
    const cliOut = join(env.dataDir, "cli-links.csv");
    const args = ["orders", "links", "--campaign", "links", "--out", cliOut];
    const made = await giftjobs(env, args);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toBe(`3 payout links written to ${cliOut}\n`);
    expect((await stat(cliOut)).mode & 0o777).toBe(0o600);
    const again = await giftjobs(env, args);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/exists: a links file is never overwritten/);
    expect(await readFile(cliOut, "utf8")).toBe(await readFile(out, "utf8"));

    // Nowhere else: the report, the worker's log, the dashboard's pages of the campaign.
    const report = join(env.dataDir, "report.csv");
    await writeReport(env.ledger, "links", report);
    const reportText = await readFile(report, "utf8");
    expect(reportText.split("\n")).toHaveLength(5);
    expect(reportText).not.toContain(REDEEM);
    expect(text()).toContain("order completed");
    expect(text()).not.toContain(REDEEM);
    const dashboard = await startDashboard({ config: env.config, port: 0 });
    try {
      for (const path of ["campaigns/links", "campaigns.json", "campaigns/links/report.csv"]) {
        const page = await fetch(`${dashboard.url}${path}`);
        expect(page.status, path).toBe(200);
        expect(await page.text(), path).not.toContain(REDEEM);
      }
    } finally {
      await dashboard.close();
    }
    // The choices' report shows what each row offered.
    await writeReport(env.ledger, "choices", report);
    const choiceReport = await readFile(report, "utf8");
    expect(choiceReport).toContain(`${a}|${b}`);
    expect(choiceReport).toContain("template PT-GJ");
  });

  it("keeps no link without --store-payout-urls; orders links says how to get them", async () => {
    const env = await envs.setup("nolinks");
    const { pair, face } = products(env);
    const file = join(env.dataDir, "links.csv");
    await writeFile(file, `product_code,face_value\n${pair[0]!.code},${face}\n`);
    await importCampaign({ file, campaign: "bare", distribution: "link" }, depsOf(env));
    await envs.work(env);
    await finished(env, "bare", 1);
    const out = join(env.dataDir, "links.csv.out");
    const refused = await giftjobs(env, ["orders", "links", "--campaign", "bare", "--out", out]);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split("\n")).toHaveLength(1);
    expect(refused.stderr).toMatch(
      /no payout link kept for its 1 completed link rows.*--store-payout-urls/,
    );
    await expect(stat(out)).rejects.toThrow();
  });

  it("refuses a link row with an e-mail, naming line and column; nothing recorded", async () => {
    const env = await envs.setup("linkmail");
    const { pair, face } = products(env);
    const file = join(env.dataDir, "links.csv");
    await writeFile(
      file,
      `email,product_code,face_value,distribution\n,${pair[0]!.code},${face},link\n` +
        `ann@example.com,${pair[0]!.code},${face},link\n`,
    );
    const refused = await importCampaign({ file, campaign: "mail" }, depsOf(env)).catch((e) => e);
    expect(refused).toBeInstanceOf(ImportRefused);
    expect(refused.result.errors).toEqual([
      { line: 3, column: "email", message: expect.stringMatching(/must be empty on a link row/) },
    ]);
    expect(await env.ledger.campaigns.exists("mail")).toBe(false);
  });
});

import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { type CampaignEnv, cliEnvOf } from "../helpers/campaign-env.js";
import { runCli } from "../helpers/cli.js";
import { csvFile } from "../helpers/csv.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";

// Money as money (docs/order-files.md): the report and the fix list show a face value in its
// currency's minor units, whatever file spelled it. The CLI against a real sandbox and Redis.

const CORPUS = fileURLToPath(new URL("../fixtures/corpus/", import.meta.url));
const CLI_TESTS_MS = 120_000;

function cli(env: CampaignEnv) {
  const vars = { ...cliEnvOf(env), GIFTJOBS_LOG_LEVEL: "warn" };
  return (args: string[]) => runCli(args, vars, env.dataDir);
}

/** A CSV's records as objects by header. */
async function records(path: string): Promise<Record<string, string>[]> {
  return parse(await readFile(path, "utf8"), { columns: true });
}

describe("money shown as money", () => {
  const campaigns = useCampaignEnv();

  it(
    "reports 25, 12.5 and 1000 from a workbook's number cells as a CSV's 25.00, 12.50 and 1000",
    async () => {
      const env = await campaigns.setup("money-report");
      const run = cli(env);
      // The same rows as the corpus's xlsxwriter-inline.xlsx, typed as money in a CSV.
      const typed = await csvFile(
        env,
        "typed.csv",
        "email,product_code,face_value,reference\n" +
          "ana@example.com,AMZ-US-00000,25.00,E-1\n" +
          "ben@example.com,AMZ-ES-00078,12.50,E-2\n" +
          "chi@example.com,BKS-JP-00026,1000,E-3\n",
      );
      const book = join(CORPUS, "xlsxwriter-inline.xlsx");
      for (const [campaign, file] of [
        ["book", book],
        ["typed", typed],
      ] as const) {
        const args = ["--campaign", campaign, "--hold", "--allow-repeats"];
        const imported = await run(["orders", "import", file, ...args]);
        expect(imported.code, imported.stderr).toBe(0);
        const out = `${campaign}-report.csv`;
        expect((await run(["orders", "report", "--campaign", campaign, "--out", out])).code).toBe(
          0,
        );
        const rows = await records(join(env.dataDir, out));
        expect(rows.map((r) => [r.face_value, r.currency])).toEqual([
          ["25.00", "USD"],
          ["12.50", "EUR"],
          ["1000", "JPY"],
        ]);
      }
    },
    CLI_TESTS_MS,
  );

  it(
    "writes an invalid row's face value as money in the fix list when its currency is known",
    async () => {
      const env = await campaigns.setup("money-fix-list");
      const run = cli(env);
      const file = await csvFile(
        env,
        "orders.csv",
        "email,product_code,face_value\n" +
          "ana@example.com,AMZ-US-00000,25\n" +
          "not-an-address,AMZ-ES-00078,12.5\n" +
          "ben@example.com,NOPE-00001,7.5\n" +
          "chi@example.com,AMZ-US-00000,12.505\n",
      );
      const fixList = join(env.dataDir, "fix.csv");
      const args = ["--skip-invalid", "--error-file", fixList, "--hold"];
      const imported = await run(["orders", "import", file, "--campaign", "fix", ...args]);
      expect(imported.code, imported.stderr).toBe(0);
      const rows = await records(fixList);
      // Its product's currency known: money; unknown product, or too many decimals: as typed.
      expect(rows.map((r) => [r.line, r.face_value])).toEqual([
        ["3", "12.50"],
        ["4", "7.5"],
        ["5", "12.505"],
      ]);
    },
    CLI_TESTS_MS,
  );
});

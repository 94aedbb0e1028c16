import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliEnvOf } from "../helpers/campaign-env.js";
import { runCli } from "../helpers/cli.js";
import { csvFile, validCsv } from "../helpers/csv.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";

/** Each test starts a few CLI children, each some seconds on a busy machine. */
const CLI_TESTS_MS = 120_000;

describe("orders report", () => {
  const campaigns = useCampaignEnv();

  it(
    "--out - writes the report to stdout, as a file would hold it, and no file named -",
    async () => {
      const env = await campaigns.setup("report-stdout");
      const cli = { ...cliEnvOf(env), GIFTJOBS_LOG_LEVEL: "warn" };
      const run = (args: string[]) => runCli(args, cli, env.dataDir);
      const file = await csvFile(env, "orders.csv", validCsv(env.index, 3).text);
      expect((await run(["orders", "import", file, "--campaign", "c", "--hold"])).code).toBe(0);

      const written = await run(["orders", "report", "--campaign", "c", "--out", "report.csv"]);
      expect(written.stdout).toBe(`3 rows written to ${join(env.dataDir, "report.csv")}\n`);
      const printed = await run(["orders", "report", "--campaign", "c", "--out", "-"]);
      expect(printed.code, printed.stderr).toBe(0);
      expect(printed.stdout).toBe(await readFile(join(env.dataDir, "report.csv"), "utf8"));
      expect(printed.stdout.trimEnd().split("\n")).toHaveLength(4);
      expect(existsSync(join(env.dataDir, "-"))).toBe(false);

      const both = await run(["orders", "report", "--campaign", "c", "--out", "-", "--json"]);
      expect(both.code).toBe(2);
      expect(both.stderr).toBe(
        "giftjobs: error: --out - writes the report to stdout: leave out --json\n",
      );
    },
    CLI_TESTS_MS,
  );
});

import { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Ledger } from "../../src/ledger/ledger.js";
import { runCli } from "../helpers/cli.js";
import { REDIS_URL, uniquePrefix } from "../helpers/redis.js";
import { removeDir, tmpDir } from "../helpers/tmp-dir.js";

/** Each test starts a few CLI children, each some seconds on a busy machine. */
const CLI_TESTS_MS = 180_000;

/** The CLI's words for a mistyped campaign name, option or command (real Redis, a real child). */
describe("words for mistakes", () => {
  let redis: Redis;
  let env: Record<string, string>;
  let dataDir: string;
  beforeEach(async () => {
    redis = new Redis(REDIS_URL);
    const prefix = uniquePrefix("words");
    dataDir = await tmpDir("words");
    env = { GIFTJOBS_REDIS_URL: REDIS_URL, GIFTJOBS_PREFIX: prefix, GIFTJOBS_DATA_DIR: dataDir };
    const ledger = new Ledger(redis, prefix);
    for (const campaign of ["q4", "spring-bonus"])
      await ledger.campaigns.register(campaign, { state: "held" } as never);
  });
  afterEach(async () => {
    await redis.quit();
    await removeDir(dataDir);
  });

  it(
    "a campaign name off by case or a typo: did you mean, and where to see them all (exit 2)",
    async () => {
      const q4 = await runCli(["orders", "status", "--campaign", "Q4"], env);
      expect(q4.code).toBe(2);
      expect(q4.stdout).toBe("");
      expect(q4.stderr).toBe(
        'giftjobs: error: no campaign named "Q4"; did you mean "q4"? (orders list shows them all)\n',
      );
      const typo = await runCli(["orders", "status", "--campaign", "spring-bonsu", "--json"], env);
      expect(typo.stderr).toBe(
        'giftjobs: error: no campaign named "spring-bonsu"; did you mean "spring-bonus"? (orders list shows them all)\n',
      );
      const far = await runCli(["orders", "status", "--campaign", "winter"], env);
      expect(far.stderr).toBe(
        'giftjobs: error: no campaign named "winter" (orders list shows them all)\n',
      );
    },
    CLI_TESTS_MS,
  );

  it(
    "orders retry --force, the old spelling of two flags: refused, naming the one it became (exit 2)",
    async () => {
      const cases: [string[], RegExp][] = [
        [["--force"], /--force is now --any-api-key: /],
        [["--new-key", "--force"], /--force is now --include-uncertain: /],
        [["--include-uncertain"], /--include-uncertain goes with --new-key/],
        [["--new-key", "--any-api-key"], /--any-api-key goes without --new-key/],
      ];
      for (const [flags, said] of cases) {
        const run = await runCli(["orders", "retry", "--campaign", "q4", ...flags], env);
        expect([flags.join(" "), run.code, run.stdout]).toEqual([flags.join(" "), 2, ""]);
        expect(run.stderr).toMatch(said);
        expect(run.stderr.trimEnd().split("\n")).toHaveLength(1);
      }
      const ledger = new Ledger(redis, env.GIFTJOBS_PREFIX!);
      expect((await ledger.campaigns.meta("q4")).state).toBe("held");
    },
    CLI_TESTS_MS,
  );

  it(
    "every command that takes --campaign goes through the same lookup",
    async () => {
      const commands = [
        ["orders", "report"],
        ["orders", "retry"],
        ["orders", "approve"],
        ["orders", "pause"],
        ["orders", "resume"],
        ["orders", "cancel"],
        ["orders", "archive"],
        ["orders", "restore"],
        ["orders", "reconcile"],
        ["orders", "payouts"],
        ["orders", "links", "--out", `${dataDir}/links.csv`],
      ];
      for (const command of commands) {
        const run = await runCli([...command, "--campaign", "Q4"], env);
        expect([command.join(" "), run.code, run.stderr]).toEqual([
          command.join(" "),
          2,
          'giftjobs: error: no campaign named "Q4"; did you mean "q4"? (orders list shows them all)\n',
        ]);
      }
      // Nothing was changed: the held campaign is still held.
      const ledger = new Ledger(redis, env.GIFTJOBS_PREFIX!);
      expect((await ledger.campaigns.meta("q4")).state).toBe("held");
    },
    CLI_TESTS_MS * 2,
  );

  it(
    "no campaigns at all: says where one comes from",
    async () => {
      const empty = { ...env, GIFTJOBS_PREFIX: uniquePrefix("words-empty") };
      const run = await runCli(["orders", "status", "--campaign", "q4"], empty);
      expect(run.code).toBe(2);
      expect(run.stderr).toBe(
        'giftjobs: error: no campaign named "q4": there are no campaigns yet (orders import makes one)\n',
      );
    },
    CLI_TESTS_MS,
  );

  it(
    "an unknown option is named as such before a required one is missed (exit 2)",
    async () => {
      const run = await runCli(["orders", "status", "--campain", "q4"], env);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr.split("\n")[0]).toBe(
        "giftjobs: error: unknown option '--campain' (did you mean --campaign?)",
      );
      for (const args of [
        ["orders", "report", "--campain", "q4"],
        ["orders", "import", "orders.csv", "--campain", "q4"],
        ["orders", "links", "--campain", "q4"],
        ["webhooks", "--prot", "8080"],
      ]) {
        const other = await runCli(args, env);
        expect([args.join(" "), other.code]).toEqual([args.join(" "), 2]);
        expect(other.stderr.split("\n")[0]).toMatch(
          /^giftjobs: error: unknown option '--(campain|prot)' \(did you mean --(campaign|port)\?\)$/,
        );
      }
    },
    CLI_TESTS_MS,
  );

  it(
    "a required option left out is still said, and an unknown command gets its suggestion",
    async () => {
      const missing = await runCli(["orders", "status"], env);
      expect(missing.code).toBe(2);
      expect(missing.stderr.split("\n")[0]).toBe(
        "giftjobs: error: required option '--campaign <name>' not specified",
      );
      const command = await runCli(["orders", "stauts", "--campaign", "q4"], env);
      expect(command.code).toBe(2);
      expect(command.stderr.split("\n")[0]).toBe(
        "giftjobs: error: unknown command 'stauts' (did you mean status?)",
      );
      // A right one still runs.
      const right = await runCli(["orders", "status", "--campaign", "q4", "--json"], env);
      expect(right.code).toBe(0);
      expect(JSON.parse(right.stdout)).toMatchObject({ campaign: "q4", state: "held" });
    },
    CLI_TESTS_MS,
  );
});

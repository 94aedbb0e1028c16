import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import {
  askYesNo,
  importConfirm,
  type PromptStreams,
  planText,
  spendQuestion,
} from "../../src/cli/confirm-import.js";
import { UserError } from "../../src/errors/user-error.js";
import type { SpendPlan } from "../../src/import/import-types.js";

/** A fake terminal: what is typed, and what was written. */
function fakeTerminal(
  tty = true,
): PromptStreams & { written: () => string; type: (s: string) => void; end: () => void } {
  const input = Object.assign(new PassThrough(), { isTTY: tty });
  const output = Object.assign(new PassThrough(), { isTTY: tty });
  let written = "";
  output.on("data", (d) => {
    written += d;
  });
  return {
    input,
    output,
    written: () => written,
    type: (s) => input.write(s),
    end: () => input.end(),
  };
}

const PLAN: SpendPlan = {
  campaign: "spring",
  rows: 3,
  totals: {
    EUR: { face_value: "20.00", price: "19.00", rows: 1 },
    USD: { face_value: "45.00", price: "39.54", rows: 2 },
  },
  held: false,
};

describe("the import question", () => {
  it("names the price per currency, the rows and the campaign", () => {
    expect(spendQuestion(PLAN)).toBe(
      "Spend 19.00 EUR, 39.54 USD on 3 rows of campaign spring? [y/N] ",
    );
  });

  it("y and yes (any case) are yes; anything else, an empty line or no answer is no", async () => {
    for (const [typed, answer] of [
      ["y\n", true],
      ["YES\n", true],
      [" yes \n", true],
      ["n\n", false],
      ["\n", false],
      ["yep\n", false],
      ["sure\n", false],
    ] as const) {
      const t = fakeTerminal();
      const asked = askYesNo("Go? [y/N] ", t);
      t.type(typed);
      expect(await asked, JSON.stringify(typed)).toBe(answer);
      expect(t.written()).toBe("Go? [y/N] ");
    }
    const t = fakeTerminal();
    const asked = askYesNo("Go? [y/N] ", t);
    t.end();
    expect(await asked).toBe(false);
  });

  it("on a terminal: shows the plan, then asks", async () => {
    const t = fakeTerminal();
    const confirm = importConfirm({ streams: t })!;
    const yes = confirm(PLAN);
    await new Promise((r) => setImmediate(r));
    t.type("y\n");
    expect(await yes).toBe(true);
    expect(t.written()).toBe(
      "3 new rows for new campaign spring:\n" +
        "  EUR: face value 20.00, price 19.00 (1 row)\n" +
        "  USD: face value 45.00, price 39.54 (2 rows)\n" +
        "Spend 19.00 EUR, 39.54 USD on 3 rows of campaign spring? [y/N] ",
    );

    const t2 = fakeTerminal();
    const no = importConfirm({ streams: t2 })!({
      ...PLAN,
      existing: { state: "running", rows: 7 },
    });
    t2.type("no\n");
    expect(await no).toBe(false);
    expect(t2.written()).toMatch(/^3 new rows for campaign spring \(running, 7 rows so far\):\n/);
  });

  it("says who priced the plan: the service, or the snapshot and why not the service", () => {
    expect(planText({ ...PLAN, pricing: { by: "service" } })).toBe(
      "3 new rows for new campaign spring:\n" +
        "  EUR: face value 20.00, price 19.00 (1 row)\n" +
        "  USD: face value 45.00, price 39.54 (2 rows)\n" +
        "  prices: the service's own (its estimate)\n",
    );
    const why = "the service did not answer: 500 internal_server_error: down";
    expect(planText({ ...PLAN, pricing: { by: "snapshot", note: why } })).toMatch(
      `\n  prices: estimated locally from the catalog snapshot (${why})\n`,
    );
  });

  it("without a terminal: refuses, telling --yes or --hold", async () => {
    for (const streams of [
      fakeTerminal(false),
      { ...fakeTerminal(), input: fakeTerminal(false).input },
    ]) {
      const confirm = importConfirm({ streams })!;
      const error = await confirm(PLAN).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UserError);
      expect((error as Error).message).toMatch(/no terminal to ask: pass --yes .* or --hold /);
    }
  });

  it("asks nothing with --yes, --hold or --dry-run", () => {
    const t = fakeTerminal();
    expect(importConfirm({ streams: t, yes: true })).toBeUndefined();
    expect(importConfirm({ streams: t, hold: true })).toBeUndefined();
    expect(importConfirm({ streams: t, dryRun: true })).toBeUndefined();
    expect(importConfirm({ streams: t })).toBeTypeOf("function");
  });
});

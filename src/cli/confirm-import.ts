import { createInterface } from "node:readline";
import { dailyLimitLine } from "../import/daily-limit-note.js";
import { type ConfirmStepChoice, confirmStep } from "../import/import-command.js";
import type { SpendPlan } from "../import/import-types.js";
import { pricingText } from "../import/pricing.js";
import { repeatLine } from "../import/repeats.js";
import { plural } from "../plural.js";

/** Where the question is asked: a terminal's stdin and stderr, or fake streams in tests. */
export interface PromptStreams {
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream & { isTTY?: boolean };
}

/**
 * Writes `question` and reads one line: true for "y" or "yes" (any case), false for anything
 * else, an empty line, or the input ending before a line.
 */
export function askYesNo(question: string, streams: PromptStreams): Promise<boolean> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: streams.input, terminal: false });
    let answered = false;
    rl.once("line", (line) => {
      answered = true;
      rl.close();
      resolve(/^\s*y(es)?\s*$/i.test(line));
    });
    rl.once("close", () => {
      if (!answered) {
        // No answer (end of input, Ctrl-D): the end of the question's line, then no.
        streams.output.write("\n");
        resolve(false);
      }
    });
    streams.output.write(question);
  });
}

/**
 * `Spend 39.54 USD, 12.00 EUR on 3 rows of campaign spring? [y/N] `
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function spendQuestion(plan: SpendPlan): string {
  const spend = Object.entries(plan.totals)
    .map(([currency, t]) => `${t.price} ${currency}`)
    .join(", ");
  return `Spend ${spend || "nothing"} on ${plan.rows} ${plural(plan.rows, "row")} of campaign ${plan.campaign}? [y/N] `;
}

/**
 * What the import will record, shown above the question: rows, per currency face value and
 * price, and who priced them.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function planText(plan: SpendPlan): string {
  const into = plan.existing
    ? `campaign ${plan.campaign} (${plan.existing.state}, ${plan.existing.rows} ${plural(plan.existing.rows, "row")} so far)`
    : `new campaign ${plan.campaign}`;
  const lines = [`${plan.rows} new ${plural(plan.rows, "row")} for ${into}:`];
  for (const [currency, t] of Object.entries(plan.totals))
    lines.push(
      `  ${currency}: face value ${t.face_value}, price ${t.price} (${t.rows} ${plural(t.rows, "row")})`,
    );
  if (plan.pricing) lines.push(`  ${pricingText(plan.pricing)}`);
  // --allow-repeats: said before the question, each earlier campaign in its own line.
  for (const group of plan.repeats ?? []) lines.push(`  pays again: ${repeatLine(group)}`);
  for (const note of plan.dailyLimit ?? []) lines.push(`  ${dailyLimitLine(note)}`);
  return `${lines.join("\n")}\n`;
}

interface ConfirmChoice {
  /** --yes: import and send without asking. */
  yes?: boolean;
  /** --hold or GIFTJOBS_REQUIRE_APPROVAL: recorded held, nothing spent until approved. */
  hold?: boolean;
  dryRun?: boolean;
  streams: PromptStreams;
  /** Called before the question is written (e.g. to stop a progress bar). */
  beforeAsking?: () => void;
}

/**
 * The prompt of an import on `streams`: it can ask when input and output are both TTYs, and
 * asking shows the plan, then the question.
 */
export function terminalPrompt(
  streams: PromptStreams,
  beforeAsking?: () => void,
): Pick<ConfirmStepChoice, "canAsk" | "ask"> {
  return {
    canAsk: Boolean(streams.input.isTTY && streams.output.isTTY),
    ask: async (plan) => {
      beforeAsking?.();
      streams.output.write(planText(plan));
      return askYesNo(spendQuestion(plan), streams);
    },
  };
}

/**
 * The `confirm` of an import (see confirmStep), asked on `choice.streams`.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function importConfirm(
  choice: ConfirmChoice,
): ((plan: SpendPlan) => Promise<boolean>) | undefined {
  const { yes, hold, dryRun, streams, beforeAsking } = choice;
  return confirmStep({ yes, hold, dryRun, ...terminalPrompt(streams, beforeAsking) });
}

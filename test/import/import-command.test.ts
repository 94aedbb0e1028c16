import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ApiClient } from "../../src/api/client.js";
import { UserError } from "../../src/errors/user-error.js";
import {
  confirmStep,
  type ImportEnd,
  type ImportIo,
  type ImportTerminal,
  importedEnd,
  importStagesOf,
  type PreparedImport,
  prepareImport,
  redisLostEnd,
  runImportCommand,
  stoppedEnd,
} from "../../src/import/import-command.js";
import { ImportDeclined, ImportRefused } from "../../src/import/import-errors.js";
import {
  type ImportCommand,
  type ImportFlags,
  type ImportSettings,
  parseImportCommand,
} from "../../src/import/import-flags.js";
import type { ImportResult, SpendPlan } from "../../src/import/import-types.js";
import type { Ledger } from "../../src/ledger/ledger.js";
import { createLogger } from "../../src/log.js";
import { fileStores } from "../../src/stores/file-stores.js";
import { tmpDir } from "../helpers/tmp-dir.js";

const SETTINGS: ImportSettings = {
  dataDir: "/data",
  templateId: "tpl-config",
  requireApproval: false,
  databaseUrl: undefined,
  databaseSchema: "giftjobs",
  redisUrl: "redis://redis.example:6390",
};

function command(flags: Partial<ImportFlags> = {}, settings = SETTINGS): ImportCommand {
  return parseImportCommand(
    { file: "orders.csv", campaign: "spring", catalogCheck: false, currency: "USD", ...flags },
    settings,
  );
}

function prepared(
  flags: Partial<ImportFlags> = {},
  settings: Partial<ImportSettings> = {},
): PreparedImport {
  const all = { ...SETTINGS, ...settings };
  return { command: command(flags, all), settings: all, catalog: undefined };
}

/** prepareImport with the data dir's stores. */
function prepare(c: ImportCommand, settings: ImportSettings = SETTINGS) {
  return prepareImport(c, { settings, stores: fileStores(settings.dataDir) });
}

const PLAN: SpendPlan = {
  campaign: "spring",
  rows: 3,
  totals: { USD: { face_value: "30.00", price: "28.50", rows: 3 } },
  held: false,
};

function terminal(overrides: Partial<ImportTerminal> = {}): ImportTerminal {
  return {
    canAsk: false,
    ask: async () => true,
    onHeader: () => {},
    onDecimalComma: () => {},
    onProgress: () => {},
    ...overrides,
  };
}

function result(overrides: Partial<ImportResult> = {}): ImportResult {
  return {
    campaign: "spring",
    rows: 3,
    valid: 3,
    invalid: 0,
    enqueued: 3,
    already_known: 0,
    orders: 3,
    totals: PLAN.totals,
    errors: [],
    more_errors: 0,
    dry_run: false,
    state: "running",
    ...overrides,
  };
}

describe("orders import: the flags to the stages' values", () => {
  it("parses every flag into its stage, with the configuration's template and the error file", () => {
    const t = terminal();
    const stages = importStagesOf(
      command({
        dryRun: true,
        skipInvalid: true,
        errorFile: "/data/errors.csv",
        budget: ["100:usd"],
        append: true,
        executionMode: "sync",
        itemsPerOrder: 1,
        map: ["E-mail=email"],
        strictColumns: true,
        delimiter: ";",
        decimalComma: false,
        sheet: "Orders",
        maxUnzippedMb: 3,
        balanceCheck: false,
        currency: "usd",
      }),
      t,
    );
    expect(stages.read).toEqual({
      file: "orders.csv",
      delimiter: ";",
      sheet: "Orders",
      maxUnzippedBytes: 3 * 2 ** 20,
    });
    expect(stages.header).toMatchObject({
      map: { "E-mail": "email" },
      strictColumns: true,
      emailOptional: false,
      onHeader: t.onHeader,
    });
    expect(stages.validation.row).toMatchObject({
      defaultTemplateId: "tpl-config",
      defaultCurrency: "USD",
      decimalComma: false,
    });
    expect(stages.validation.preflight).toEqual({ currency: "USD" });
    expect(stages.pricing).toMatchObject({
      budgets: [{ amount: "100", currency: "USD" }],
      balanceCheck: false,
    });
    expect(stages.recording).toMatchObject({
      campaign: "spring",
      hold: false,
      append: true,
      executionMode: "sync",
      itemsPerOrder: 1,
      repeats: "refuse",
    });
    expect(stages.run).toMatchObject({
      dryRun: true,
      skipInvalid: true,
      errorFile: "/data/errors.csv",
      onProgress: t.onProgress,
    });
    // A dry run asks nothing.
    expect(stages.run.confirm).toBeUndefined();
  });

  it("--template-id over the configuration's; no --max-unzipped-mb, no limit given", () => {
    const { stages } = command({ templateId: "tpl-flag" });
    expect(stages.validation.row.defaultTemplateId).toBe("tpl-flag");
    expect(stages.read.maxUnzippedBytes).toBeUndefined();
  });

  it("--allow-repeats and --skip-repeats choose the repeats", () => {
    expect(command({ allowRepeats: true }).stages.recording.repeats).toBe("allow");
    expect(command({ skipRepeats: true }).stages.recording.repeats).toBe("skip");
  });

  it("a bad value names its flag", () => {
    expect(() => command({ currency: "dollars" })).toThrow(
      "--currency must be a 3-letter currency code",
    );
    expect(() => command({ budget: ["lots"] })).toThrow(UserError);
    expect(() => command({ map: ["no-equals"] })).toThrow(UserError);
    expect(() => command({ executionMode: "fast" as "sync" })).toThrow("--execution-mode");
  });

  it("GIFTJOBS_REQUIRE_APPROVAL holds the import, --yes or not, and asks nothing", () => {
    const c = command({ yes: true }, { ...SETTINGS, requireApproval: true });
    expect(c.stages.recording.hold).toBe(true);
    expect(c.hold).toBe(false);
    const stages = importStagesOf(c, terminal({ canAsk: true }));
    expect(stages.recording.hold).toBe(true);
    expect(stages.run.confirm).toBeUndefined();
  });
});

describe("orders import: before the file is read", () => {
  it("--no-catalog-check needs --currency", () => {
    let error: unknown;
    try {
      command({ currency: undefined });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UserError);
    expect((error as Error).message).toBe(
      "--no-catalog-check needs --currency CUR: the currency every row pays in",
    );
  });

  it("a catalog check without a snapshot is refused, naming the folder", async () => {
    const dataDir = await tmpDir("cmd-nosnap");
    const settings = { ...SETTINGS, dataDir };
    const error = await prepare(command({ catalogCheck: true }, settings), settings).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UserError);
    expect((error as Error).message).toBe(
      `no catalog snapshot in ${join(dataDir, "catalog")}: run \`giftjobs catalog sync\` first, or pass --no-catalog-check`,
    );
  });

  it("the error file: --error-file made absolute, else one per import under the campaign", async () => {
    const given = await prepare(command({ errorFile: "bad.csv" }));
    expect(given.command.stages.run.errorFile).toBe(join(process.cwd(), "bad.csv"));
    const made = await prepare(command());
    expect(made.command.stages.run.errorFile).toMatch(
      /^\/data\/campaigns\/spring\/invalid-rows-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z\.csv$/,
    );
    expect(made.command.stages.recording.hold).toBe(false);
    expect((await prepare(command({ hold: true }))).command.stages.recording.hold).toBe(true);
  });
});

describe("orders import: the confirm step", () => {
  it("asks nothing with --yes, --hold or --dry-run", () => {
    const ask = async () => true;
    expect(confirmStep({ yes: true, canAsk: true, ask })).toBeUndefined();
    expect(confirmStep({ hold: true, canAsk: true, ask })).toBeUndefined();
    expect(confirmStep({ dryRun: true, canAsk: false, ask })).toBeUndefined();
  });

  it("on a terminal asks; without one refuses, telling --yes or --hold", async () => {
    const asked: SpendPlan[] = [];
    const confirm = confirmStep({
      canAsk: true,
      ask: async (plan) => {
        asked.push(plan);
        return false;
      },
    });
    expect(await confirm!(PLAN)).toBe(false);
    expect(asked).toEqual([PLAN]);

    const refuse = confirmStep({ canAsk: false, ask: async () => true });
    const error = await refuse!(PLAN).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect((error as Error).message).toBe(
      "campaign spring: 3 new rows to spend on and no terminal to ask: pass --yes to import and send them, or --hold to record the campaign held until `orders approve`; nothing was recorded",
    );
  });
});

describe("orders import: how it ends", () => {
  it("imported: exit 0; replaced budgets and a hold by GIFTJOBS_REQUIRE_APPROVAL noted", () => {
    const plain = importedEnd(result(), prepared());
    expect(plain).toMatchObject({ kind: "imported", code: 0, notes: [] });
    expect(plain.json).toMatchObject({ campaign: "spring", errors: [], state: "running" });

    const replaced = [{ currency: "USD", from: "10.00", to: "20.00" }];
    const held = result({ state: "held", budgets_replaced: replaced });
    const end = importedEnd(held, prepared({ yes: true }, { requireApproval: true }));
    expect(end.kind === "imported" && end.notes).toEqual([
      "campaign spring: its USD budget 10.00 is replaced by 20.00",
      "GIFTJOBS_REQUIRE_APPROVAL is set: campaign spring is held even with --yes; send it with `giftjobs orders approve --campaign spring`",
    ]);
    const notes = (e: ImportEnd) => (e.kind === "imported" ? e.notes : undefined);
    // Held by its own --hold, or a dry run: nothing to say.
    expect(
      notes(
        importedEnd(result({ state: "held" }), prepared({ hold: true }, { requireApproval: true })),
      ),
    ).toEqual([]);
    expect(
      notes(
        importedEnd(
          result({ state: "held", dry_run: true }),
          prepared({}, { requireApproval: true }),
        ),
      ),
    ).toEqual([]);
  });

  it("declined: exit 1, the reason in the JSON's errors", () => {
    const end = stoppedEnd(new ImportDeclined(result({ enqueued: 0, orders: 0 })));
    expect(end).toMatchObject({
      kind: "declined",
      code: 1,
      message: "campaign spring: not confirmed; nothing was recorded",
    });
    expect(end.json.errors).toEqual([
      { line: null, message: "campaign spring: not confirmed; nothing was recorded" },
    ]);
  });

  it("refused: exit 2; the rows' errors, and the reason only when it is not those rows", () => {
    const rowError = { line: 2, column: "email", message: "not an e-mail address" };
    const forRows = stoppedEnd(
      new ImportRefused(
        "1 invalid row; nothing was enqueued",
        result({ errors: [rowError] }),
        true,
      ),
    );
    expect(forRows).toMatchObject({ kind: "refused", code: 2 });
    expect(forRows.json.errors).toEqual([rowError]);
    const budget = stoppedEnd(new ImportRefused("over budget", result()));
    expect(budget.json.errors).toEqual([{ line: null, message: "over budget" }]);
  });

  it("any other error is thrown", () => {
    const error = new UserError("campaign spring is cancelled");
    expect(() => stoppedEnd(error)).toThrow(error);
  });

  it("Redis lost mid-way: exit 1, what was recorded, and the address", () => {
    const end = redisLostEnd(prepared(), 1500);
    const line =
      "giftjobs: Redis went away during the import (redis.example:6390 stopped answering): at least 1500 rows were recorded; run the same import again to record the rest";
    expect(end).toMatchObject({ kind: "redis_lost", code: 1, line });
    expect(end.json).toMatchObject({
      campaign: "spring",
      enqueued: 1500,
      errors: [{ line: null, message: line }],
    });
  });
});

describe("orders import: the run, on a ledger of no campaigns", () => {
  /** A ledger that knows no campaign and no row; `fail` makes it fail at once. */
  function emptyLedger(fail?: Error): Ledger {
    const answer = <T>(value: T) => (fail ? Promise.reject(fail) : Promise.resolve(value));
    return {
      campaigns: { exists: () => answer(false), names: () => answer([]) },
      orders: {
        getRows: (_: string, identities: string[]) => answer(identities.map(() => undefined)),
        getOrders: () => answer([]),
      },
      importedToday: {
        add: (...[, , , units]: unknown[]) => answer(units),
        read: () => answer(0n),
      },
    } as unknown as Ledger;
  }

  async function run(
    text: string,
    overrides: Partial<ImportFlags>,
    io: Partial<ImportIo> & { ledger?: Ledger } = {},
  ): Promise<{ code: number; events: string[]; end: ImportEnd | undefined }> {
    const dir = await tmpDir("cmd-run");
    const file = join(dir, "orders.csv");
    await writeFile(file, text);
    const events: string[] = [];
    let end: ImportEnd | undefined;
    const code = await runImportCommand(prepared({ file, ...overrides }, { dataDir: dir }), {
      ...terminal(),
      withServices: (fn) =>
        fn({
          ledger: io.ledger ?? emptyLedger(),
          client: undefined as unknown as ApiClient,
          stores: fileStores(dir),
        }),
      log: createLogger({ level: "silent" }),
      ended: () => events.push("ended"),
      print: (e) => {
        events.push(`print ${e.kind}`);
        end = e;
      },
      ...io,
    });
    return { code, events, end };
  }

  const GOOD = "email,product_code,face_value\na@example.com,ANY-1,10\nb@example.com,ANY-2,12.50\n";

  it("a dry run: exit 0, the bar stopped before the result is printed", async () => {
    const { code, events, end } = await run(GOOD, { dryRun: true });
    expect(code).toBe(0);
    expect(events).toEqual(["ended", "print imported"]);
    expect(end?.kind === "imported" && end.result).toMatchObject({ rows: 2, valid: 2 });
  });

  it("not confirmed: exit 1; an invalid row in strict mode: exit 2", async () => {
    const declined = await run(GOOD, {}, { canAsk: true, ask: async () => false });
    expect([declined.code, declined.events]).toEqual([1, ["ended", "print declined"]]);
    const bad = "email,product_code,face_value\nnot-an-email,ANY-1,10\n";
    const refused = await run(bad, { yes: true });
    expect([refused.code, refused.events]).toEqual([2, ["ended", "print refused"]]);
  });

  it("Redis lost once connected: exit 1; before connecting, or another error: thrown", async () => {
    const lost = await run(GOOD, { yes: true }, { ledger: emptyLedger(new Error("ECONNRESET")) });
    expect([lost.code, lost.events]).toEqual([1, ["ended", "ended", "print redis_lost"]]);
    expect(lost.end).toMatchObject({ kind: "redis_lost", json: { enqueued: 0 } });

    const away = new Error("connect ECONNREFUSED 127.0.0.1:6390");
    await expect(
      run(GOOD, { yes: true }, { withServices: () => Promise.reject(away) }),
    ).rejects.toBe(away);
    const other = new Error("something else");
    await expect(run(GOOD, { yes: true }, { ledger: emptyLedger(other) })).rejects.toBe(other);
  });
});

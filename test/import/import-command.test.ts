import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ApiClient } from "../../src/api/client.js";
import { UserError } from "../../src/errors/user-error.js";
import {
  confirmStep,
  type ImportCommand,
  type ImportEnd,
  type ImportIo,
  type ImportSettings,
  type ImportTerminal,
  importedEnd,
  importOptionsOf,
  type PreparedImport,
  prepareImport,
  redisLostEnd,
  runImportCommand,
  stoppedEnd,
} from "../../src/import/import-command.js";
import { ImportDeclined, ImportRefused } from "../../src/import/import-errors.js";
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

function command(overrides: Partial<ImportCommand> = {}): ImportCommand {
  return {
    file: "orders.csv",
    campaign: "spring",
    budgets: [],
    executionMode: "async",
    catalogCheck: false,
    balanceCheck: true,
    currency: "USD",
    ...overrides,
  };
}

function prepared(
  overrides: Partial<ImportCommand> = {},
  settings: Partial<ImportSettings> = {},
): PreparedImport {
  const all = { ...SETTINGS, ...settings };
  const c = command(overrides);
  return {
    command: c,
    settings: all,
    catalog: undefined,
    errorFile: "/data/errors.csv",
    hold: Boolean(c.hold) || all.requireApproval,
  };
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

describe("orders import: the flags to ImportOptions", () => {
  it("maps every flag, with the configuration's template and the error file prepared", () => {
    const t = terminal();
    const options = importOptionsOf(
      prepared({
        dryRun: true,
        skipInvalid: true,
        budgets: [{ amount: "100", currency: "USD" }],
        append: true,
        executionMode: "sync",
        itemsPerOrder: 1,
        map: { "E-mail": "email" },
        strictColumns: true,
        delimiter: ";",
        decimalComma: false,
        sheet: "Orders",
        maxUnzippedMb: 3,
        balanceCheck: false,
      }),
      t,
    );
    expect(options).toMatchObject({
      file: "orders.csv",
      campaign: "spring",
      dryRun: true,
      skipInvalid: true,
      errorFile: "/data/errors.csv",
      budgets: [{ amount: "100", currency: "USD" }],
      hold: false,
      append: true,
      executionMode: "sync",
      itemsPerOrder: 1,
      defaultTemplateId: "tpl-config",
      map: { "E-mail": "email" },
      header: { strictColumns: true, onHeader: t.onHeader },
      delimiter: ";",
      decimalComma: false,
      onDecimalComma: t.onDecimalComma,
      sheet: "Orders",
      maxUnzippedBytes: 3 * 2 ** 20,
      currency: "USD",
      balanceCheck: false,
      onProgress: t.onProgress,
    });
    // A dry run asks nothing.
    expect(options.confirm).toBeUndefined();
  });

  it("--template-id over the configuration's; no --max-unzipped-mb, no limit given", () => {
    const options = importOptionsOf(prepared({ templateId: "tpl-flag" }), terminal());
    expect(options.defaultTemplateId).toBe("tpl-flag");
    expect(options.maxUnzippedBytes).toBeUndefined();
  });

  it("GIFTJOBS_REQUIRE_APPROVAL holds the import, --yes or not, and asks nothing", async () => {
    const p = await prepareImport(command({ yes: true }), { ...SETTINGS, requireApproval: true });
    expect(p.hold).toBe(true);
    const options = importOptionsOf(p, terminal({ canAsk: true }));
    expect(options.hold).toBe(true);
    expect(options.confirm).toBeUndefined();
  });
});

describe("orders import: before the file is read", () => {
  it("--no-catalog-check needs --currency", async () => {
    const error = await prepareImport(command({ currency: undefined }), SETTINGS).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UserError);
    expect((error as Error).message).toBe(
      "--no-catalog-check needs --currency CUR: the currency every row pays in",
    );
  });

  it("a catalog check without a snapshot is refused, naming the folder", async () => {
    const dataDir = await tmpDir("cmd-nosnap");
    const error = await prepareImport(command({ catalogCheck: true }), {
      ...SETTINGS,
      dataDir,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect((error as Error).message).toBe(
      `no catalog snapshot in ${join(dataDir, "catalog")}: run \`giftjobs catalog sync\` first, or pass --no-catalog-check`,
    );
  });

  it("the error file: --error-file made absolute, else one per import under the campaign", async () => {
    const given = await prepareImport(command({ errorFile: "bad.csv" }), SETTINGS);
    expect(given.errorFile).toBe(join(process.cwd(), "bad.csv"));
    const made = await prepareImport(command(), SETTINGS);
    expect(made.errorFile).toMatch(
      /^\/data\/campaigns\/spring\/invalid-rows-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z\.csv$/,
    );
    expect(made.hold).toBe(false);
    expect((await prepareImport(command({ hold: true }), SETTINGS)).hold).toBe(true);
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
    } as unknown as Ledger;
  }

  async function run(
    text: string,
    overrides: Partial<ImportCommand>,
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

import cliProgress from "cli-progress";
import type { Command } from "commander";
import {
  DEFAULT_CATALOG_CRON,
  scheduleCatalogSync,
  unscheduleCatalogSync,
} from "../../../jobs/catalog/schedule.js";
import { apiClientFor } from "../../api/client-for-config.js";
import type { RawProduct } from "../../api/schemas.js";
import { openCatalogStore } from "../../catalog/catalog-store.js";
import { requireCurrentSnapshot } from "../../catalog/current-snapshot.js";
import { diffSummaryLine, diffText } from "../../catalog/diff-text.js";
import { isOrderable } from "../../catalog/orderable.js";
import {
  overlayLine,
  productOverlay,
  type ShownProduct,
} from "../../catalog/overridden-product.js";
import { PgProductOverrides } from "../../catalog/pg-product-overrides.js";
import type { ProductOverrideMap } from "../../catalog/product-overrides.js";
import {
  PRODUCT_COLUMNS,
  productHasCode,
  productRow,
  tableLine,
} from "../../catalog/product-summary.js";
import { type SyncProgress, syncCatalog } from "../../catalog/sync-catalog.js";
import type { Database } from "../../db/open-database.js";
import { UserError } from "../../errors/user-error.js";
import { Ledger } from "../../ledger/ledger.js";
import { commandClient, connectRedis, type RedisConnection } from "../../redis/connection.js";
import { assertRedisAnswers, RedisDownError } from "../../redis/redis-down.js";
import { collect, wholeNumber } from "../option-parsers.js";
import { action, type CommandContext, createContext, printJson } from "../run-action.js";
import { registerImportFiles } from "./catalog-import-files.js";

interface SyncFlags {
  orderableOnly?: boolean;
  country: string[];
  category: string[];
  allowShrink?: boolean;
  keep: string;
  json?: boolean;
}

interface ShowFlags {
  code?: string;
  country?: string;
  orderable?: boolean;
  json?: boolean;
}

function countryCode(flag: string, value: string): string {
  const code = value.toUpperCase();
  if (!/^[A-Z]{2}$/.test(code)) {
    throw new UserError(`${flag} must be an ISO 3166 alpha-2 code like GB (got ${value})`);
  }
  return code;
}

/** A progress line on the terminal; nothing when not interactive. */
function progressReporter(ctx: CommandContext): {
  update: (progress: SyncProgress) => void;
  stop: () => void;
} {
  if (!ctx.interactive) return { update: () => undefined, stop: () => undefined };
  const bar = new cliProgress.SingleBar(
    { format: "catalog sync | {value} pages | {products} products", stream: process.stderr },
    cliProgress.Presets.shades_classic,
  );
  bar.start(0, 0, { products: 0 });
  return {
    update: (p) => bar.update(p.pages, { products: p.products }),
    stop: () => bar.stop(),
  };
}

async function runSync(flags: SyncFlags): Promise<number> {
  const ctx = createContext(Boolean(flags.json));
  const filters = {
    orderableOnly: Boolean(flags.orderableOnly),
    countries: flags.country.map((c) => countryCode("--country", c)),
    categories: flags.category,
  };
  const keep = wholeNumber("--keep", flags.keep, 1);
  const progress = progressReporter(ctx);
  let result: Awaited<ReturnType<typeof syncCatalog>>;
  try {
    result = await syncCatalog({
      client: apiClientFor(ctx.config),
      dataDir: ctx.config.dataDir,
      database: (await openCatalogStore(ctx.config)).database,
      apiVersion: ctx.config.apiVersion,
      filters,
      allowShrink: Boolean(flags.allowShrink),
      keep,
      log: ctx.log,
      onProgress: progress.update,
    });
  } finally {
    progress.stop();
  }
  const { summary } = result.diff;
  if (ctx.json) {
    printJson({
      products: result.manifest.product_count,
      pages: result.manifest.pages,
      snapshot: result.dir,
      added: summary.added,
      removed: summary.removed,
      changed: summary.changed,
    });
    return 0;
  }
  const { manifest } = result;
  const lines = [
    `Synced ${manifest.product_count} products in ${manifest.pages} pages (${manifest.duration_ms} ms) -> ${result.dir}`,
    diffSummaryLine(result.diff),
  ];
  if (manifest.warnings.length > 0) {
    lines.push(
      `${manifest.warnings.length} products kept with problems in fields giftjobs relies on (see warnings in manifest.json)`,
    );
  }
  process.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}

/** Set when the reader of stdout went away (`catalog show | head`): stop quietly. */
let stdoutClosed = false;

/** Writes to stdout respecting back-pressure: a show of 100k products must not pile up in memory. */
async function write(text: string): Promise<void> {
  if (stdoutClosed) return;
  if (process.stdout.listenerCount("error") === 0) {
    process.stdout.on("error", () => {
      stdoutClosed = true;
    });
  }
  if (!process.stdout.write(text)) {
    await new Promise<void>((resolve) => {
      process.stdout.once("drain", resolve);
      process.stdout.once("error", () => resolve());
    });
  }
}

/**
 * The product states pushed since the sync (product.update), as an import lays them over the
 * snapshot: the database's with one (docs/catalog-database.md, "The order journal and product
 * overrides"), else Redis's; none when Redis does not answer, said in one line (the snapshot is
 * still shown).
 */
async function pushedStates(
  ctx: CommandContext,
  database: Database | undefined,
): Promise<ProductOverrideMap> {
  if (database) return new PgProductOverrides(database).read();
  try {
    return await withRedis(ctx, (redis) =>
      new Ledger(commandClient(redis), ctx.config.prefix).productOverrides().read(),
    );
  } catch (error) {
    if (!(error instanceof RedisDownError)) throw error;
    process.stderr.write(
      `giftjobs: warning: ${error.message}; product.update changes since the sync are not shown\n`,
    );
    return {};
  }
}

/**
 * `catalog show`: the current snapshot with the product.update changes since the sync laid
 * over it, as an import sees it; --orderable keeps the products an import takes (orderable.ts).
 * See docs/commands.md, "Catalog".
 */
async function runShow(flags: ShowFlags): Promise<number> {
  const ctx = createContext(Boolean(flags.json));
  const country = flags.country === undefined ? undefined : countryCode("--country", flags.country);
  const store = await openCatalogStore(ctx.config);
  const snapshot = await requireCurrentSnapshot(store);
  await snapshot.verifyProducts();
  const pushed = await pushedStates(ctx, store.database);
  const overlay = productOverlay(pushed, snapshot.manifest.fetched_at);
  const selected = (product: RawProduct) =>
    (flags.code === undefined || productHasCode(product, flags.code)) &&
    (country === undefined ||
      (Array.isArray(product.countries_redeemable_in) &&
        product.countries_redeemable_in.includes(country)));
  // Changed products among those selected, shown or not (--orderable may hide them).
  const changed: ShownProduct[] = [];
  async function* shown(): AsyncGenerator<ShownProduct> {
    for await (const raw of snapshot.products()) {
      if (stdoutClosed) return;
      if (!selected(raw)) continue;
      const view = overlay(raw);
      if (view.update) changed.push(view);
      if (flags.orderable && !isOrderable(view.product)) continue;
      yield view;
    }
  }
  let count = 0;
  if (ctx.json) {
    await write("[");
    for await (const { product, update } of shown()) {
      const json = update ? { ...product, product_update: update } : product;
      await write(`${count === 0 ? "\n" : ",\n"}${JSON.stringify(json)}`);
      count += 1;
    }
    await write(count === 0 ? "]\n" : "\n]\n");
    return 0;
  }
  await write(`${tableLine(PRODUCT_COLUMNS)}\n`);
  for await (const { product } of shown()) {
    await write(`${tableLine(productRow(product))}\n`);
    count += 1;
  }
  process.stderr.write(
    `${count} of ${snapshot.manifest.product_count} products (snapshot ${snapshot.name}, fetched ${snapshot.manifest.fetched_at})\n`,
  );
  const line = overlayLine(changed);
  if (line) process.stderr.write(`${line}\n`);
  return 0;
}

async function runDiff(flags: { json?: boolean }): Promise<number> {
  const ctx = createContext(Boolean(flags.json));
  const snapshot = await requireCurrentSnapshot(await openCatalogStore(ctx.config));
  const diff = await snapshot.diff();
  if (!diff) throw new UserError(`snapshot ${snapshot.name} has no diff.json`);
  if (ctx.json) printJson(diff);
  else process.stdout.write(`${diffText(diff)}\n`);
  return 0;
}

async function withRedis<T>(
  ctx: CommandContext,
  fn: (redis: RedisConnection) => Promise<T>,
): Promise<T> {
  const redis = connectRedis(ctx.config);
  // Redis away is told once, by assertRedisAnswers or the failing command: no ioredis noise.
  redis.on("error", () => {});
  try {
    await assertRedisAnswers(redis, ctx.config);
    return await fn(redis);
  } finally {
    redis.disconnect();
  }
}

async function runSchedule(flags: { cron: string; tz: string; json?: boolean }): Promise<number> {
  const ctx = createContext(Boolean(flags.json));
  const schedule = await withRedis(ctx, (connection) =>
    scheduleCatalogSync({ connection, prefix: ctx.config.prefix, cron: flags.cron, tz: flags.tz }),
  );
  if (ctx.json) printJson({ ...schedule, next: schedule.next?.toISOString() ?? null });
  else {
    const next = schedule.next ? `; next run ${schedule.next.toISOString()}` : "";
    process.stdout.write(`catalog sync scheduled: "${schedule.cron}" (${schedule.tz})${next}\n`);
  }
  return 0;
}

async function runUnschedule(flags: { json?: boolean }): Promise<number> {
  const ctx = createContext(Boolean(flags.json));
  const removed = await withRedis(ctx, (connection) =>
    unscheduleCatalogSync({ connection, prefix: ctx.config.prefix }),
  );
  if (ctx.json) printJson({ removed });
  else
    process.stdout.write(
      removed ? "catalog sync unscheduled\n" : "no catalog sync was scheduled\n",
    );
  return 0;
}

/** Registers `catalog sync|show|diff|schedule|unschedule`. */
export function register(program: Command): void {
  const catalog = program
    .command("catalog")
    .description("Mirror the product catalog into local snapshots.");
  catalog
    .command("sync")
    .description("Fetch the whole catalog now and publish it as a new snapshot.")
    .option("--orderable-only", "only products that can be ordered")
    .option("--country <CC>", "only products redeemable in this country (repeatable)", collect, [])
    .option("--category <C>", "only products in this category (repeatable)", collect, [])
    .option("--allow-shrink", "publish even if the catalog shrank by more than 20%")
    .option("--keep <N>", "snapshots to keep", "14")
    .option("--json", "print one JSON document")
    .action(action(runSync));
  catalog
    .command("show")
    .description(
      "List products of the current snapshot, with the product.update changes since the sync.",
    )
    .option("--code <C>", "only this product (or subscription plan) code")
    .option("--country <CC>", "only products redeemable in this country")
    .option(
      "--orderable",
      "only products an import takes (is_orderable, LIVE or TEMPORARILY_DEGRADED)",
    )
    .option(
      "--json",
      "print a JSON array of products (product_update: what a product.update changed)",
    )
    .action(action(runShow));
  catalog
    .command("diff")
    .description("Show what the latest sync changed.")
    .option("--json", "print the diff as JSON")
    .action(action(runDiff));
  catalog
    .command("schedule")
    .description("Register the nightly catalog-sync job scheduler (run by `giftjobs worker`).")
    .option("--cron <EXPR>", "cron expression", DEFAULT_CATALOG_CRON)
    .option("--tz <ZONE>", "IANA time zone of the cron expression", "UTC")
    .option("--json", "print one JSON document")
    .action(action(runSchedule));
  catalog
    .command("unschedule")
    .description("Remove the catalog-sync job scheduler.")
    .option("--json", "print one JSON document")
    .action(action(runUnschedule));
  registerImportFiles(catalog);
}

import type { RawProduct } from "../../api/schemas.js";
import { requireCurrentSnapshot } from "../../catalog/current-snapshot.js";
import { diffText } from "../../catalog/diff-text.js";
import { isOrderable } from "../../catalog/orderable.js";
import {
  overlayLine,
  productOverlay,
  type ShownProduct,
} from "../../catalog/overridden-product.js";
import type { ProductOverrideMap } from "../../catalog/product-overrides.js";
import {
  PRODUCT_COLUMNS,
  productHasCode,
  productRow,
  tableLine,
} from "../../catalog/product-summary.js";
import { UserError } from "../../errors/user-error.js";
import { Ledger } from "../../ledger/ledger.js";
import { commandClient } from "../../redis/connection.js";
import { RedisDownError } from "../../redis/redis-down.js";
import { type Stores, withStores } from "../../stores/stores.js";
import { countryCode } from "../option-parsers.js";
import { stdoutGone } from "../output.js";
import { type CommandContext, createContext, printJson } from "../run-action.js";
import { withRedis } from "../services.js";

interface ShowFlags {
  code?: string;
  country?: string;
  orderable?: boolean;
  json?: boolean;
}

/** Writes to stdout respecting back-pressure: a show of 100k products must not pile up in memory. */
async function write(text: string): Promise<void> {
  // The reader went away (`catalog show | head`): stop quietly (src/cli/output.ts).
  if (stdoutGone()) return;
  if (!process.stdout.write(text)) {
    await new Promise<void>((resolve) => {
      process.stdout.once("drain", resolve);
      process.stdout.once("error", () => resolve());
    });
  }
}

/**
 * The product states pushed since the sync (product.update), as an import lays them over the
 * snapshot, from the stores (docs/catalog-database.md, "The order journal and product
 * overrides"); none when Redis does not answer, said in one line (the snapshot is still shown).
 */
async function pushedStates(ctx: CommandContext, stores: Stores): Promise<ProductOverrideMap> {
  try {
    return await withRedis(ctx.config, (redis) =>
      stores.productOverrides(new Ledger(commandClient(redis), ctx.config.prefix)).read(),
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
export async function runShow(flags: ShowFlags): Promise<number> {
  const ctx = createContext(Boolean(flags.json));
  return withStores(ctx.config, (stores) => show(ctx, stores, flags));
}

async function show(ctx: CommandContext, stores: Stores, flags: ShowFlags): Promise<number> {
  const country = flags.country === undefined ? undefined : countryCode("--country", flags.country);
  const snapshot = await requireCurrentSnapshot(stores.catalog);
  await snapshot.verifyProducts();
  const pushed = await pushedStates(ctx, stores);
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
      if (stdoutGone()) return;
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

export async function runDiff(flags: { json?: boolean }): Promise<number> {
  const ctx = createContext(Boolean(flags.json));
  const diff = await withStores(ctx.config, async (stores) => {
    const snapshot = await requireCurrentSnapshot(stores.catalog);
    const found = await snapshot.diff();
    if (!found) throw new UserError(`snapshot ${snapshot.name} has no diff.json`);
    return found;
  });
  if (ctx.json) printJson(diff);
  else process.stdout.write(`${diffText(diff)}\n`);
  return 0;
}

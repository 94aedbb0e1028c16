import cliProgress from "cli-progress";
import { apiClientFor } from "../../api/client-for-config.js";
import { diffSummaryLine } from "../../catalog/diff-text.js";
import { type SyncProgress, syncCatalog } from "../../catalog/sync-catalog.js";
import { withStores } from "../../stores/stores.js";
import { countryCode, wholeNumber } from "../option-parsers.js";
import { type CommandContext, createContext, printJson } from "../run-action.js";

interface SyncFlags {
  orderableOnly?: boolean;
  country: string[];
  category: string[];
  allowShrink?: boolean;
  keep: string;
  json?: boolean;
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

/** `catalog sync`: the whole catalog fetched now and published as a new snapshot. */
export async function runSync(flags: SyncFlags): Promise<number> {
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
    result = await withStores(ctx.config, (stores) =>
      syncCatalog({
        client: apiClientFor(ctx.config),
        dataDir: ctx.config.dataDir,
        store: stores.catalog,
        apiVersion: ctx.config.apiVersion,
        filters,
        allowShrink: Boolean(flags.allowShrink),
        keep,
        log: ctx.log,
        onProgress: progress.update,
      }),
    );
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

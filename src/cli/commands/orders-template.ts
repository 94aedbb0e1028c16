import { writeFile } from "node:fs/promises";
import { extname, resolve } from "node:path";
import type { Command } from "commander";
import { openCatalogStore } from "../../catalog/catalog-store.js";
import { loadCurrentIndex } from "../../catalog/current-snapshot.js";
import { catalogPlace, fillCatalogHint } from "../../catalog/no-snapshot-error.js";
import { UserError } from "../../errors/user-error.js";
import { templateCsv, writeTemplateXlsx } from "../../import/order-template.js";
import { action, createContext } from "../run-action.js";

export function registerTemplate(orders: Command): void {
  orders
    .command("template")
    .description(
      "Write a ready-to-fill order file: the header and an example row from the catalog snapshot.",
    )
    .option(
      "--out <file>",
      "FILE.csv, or FILE.xlsx with a Products sheet of the snapshot's orderable products (default: CSV on stdout)",
    )
    .option("--country <CC>", "only products redeemable in this country")
    .option("--orderable", "list only the products an import accepts now (LIVE)")
    .action(
      action(async (opts: { out?: string; country?: string; orderable?: boolean }) => {
        const ctx = createContext();
        const ext = opts.out ? extname(opts.out).toLowerCase() : ".csv";
        if (ext !== ".csv" && ext !== ".xlsx")
          throw new UserError(`--out ${opts.out}: name a .csv or .xlsx file`);
        const index = await loadCurrentIndex(await openCatalogStore(ctx.config));
        if (!index)
          process.stderr.write(
            `note: no catalog snapshot in ${catalogPlace(ctx.config)}: the example row's product code is a placeholder (${fillCatalogHint(Boolean(ctx.config.databaseUrl))})\n`,
          );
        const options = { country: opts.country, orderable: opts.orderable };
        if (!opts.out) {
          process.stdout.write(templateCsv(index, options));
          return 0;
        }
        const out = resolve(opts.out);
        if (ext === ".xlsx") await writeTemplateXlsx(out, index, options);
        else await writeFile(out, templateCsv(index, options), "utf8");
        process.stderr.write(`template written to ${out}\n`);
        return 0;
      }),
    );
}

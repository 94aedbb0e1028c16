import { writeFile } from "node:fs/promises";
import { extname, resolve } from "node:path";
import { loadCurrentIndex } from "../../catalog/current-snapshot.js";
import { catalogPlace, fillCatalogHint } from "../../catalog/no-snapshot-error.js";
import { UserError } from "../../errors/user-error.js";
import { templateCsv, writeTemplateXlsx } from "../../import/order-template.js";
import { withStores } from "../../stores/stores.js";
import { createContext } from "../run-action.js";

/** `orders template`: CSV on stdout, or a .csv or .xlsx file. */
export async function runTemplate(opts: {
  out?: string;
  country?: string;
  orderable?: boolean;
}): Promise<number> {
  const ctx = createContext();
  const ext = opts.out ? extname(opts.out).toLowerCase() : ".csv";
  if (ext !== ".csv" && ext !== ".xlsx")
    throw new UserError(`--out ${opts.out}: name a .csv or .xlsx file`);
  const index = await withStores(ctx.config, (stores) => loadCurrentIndex(stores.catalog));
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
}

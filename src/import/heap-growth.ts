import { setFlagsFromString } from "node:v8";

/**
 * How far V8 lets the heap grow past what a full garbage collection left alive, in percent:
 * 200 lets it reach 3x. Left to itself V8 goes up to 4x for a program that allocates as fast as
 * an import does: a million-row import's main heap rose to 155-170 MB around 50-80 MB in use
 * (docs/architecture/import.md, "The heap's growth").
 */
const IMPORT_HEAP_GROWING_PERCENT = 200;

/**
 * Sets the heap's growth for an import's process (`orders import` calls it first): process-wide,
 * so the library's importCampaign leaves it to its caller. A `--heap-growing-percent` given to
 * Node (NODE_OPTIONS, or on its command line) is left as it is.
 */
export function limitHeapGrowthForImport(): void {
  const given = `${process.env.NODE_OPTIONS ?? ""} ${process.execArgv.join(" ")}`;
  if (/--heap[-_]growing[-_]percent/.test(given)) return;
  setFlagsFromString(`--heap-growing-percent=${IMPORT_HEAP_GROWING_PERCENT}`);
}

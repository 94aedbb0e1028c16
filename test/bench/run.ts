// Runs benchmarks by name: `npm run bench -- catalog` (default: every bench that exists). With
// `--write`, each bench's tables go to docs/benchmarks/NAME.md (test/helpers/bench-figures.ts).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { benchArgs, figuresPage, takeFigures, writeFiguresPage } from "../helpers/bench-figures.js";
import { loadAverage } from "../helpers/bench-stats.js";

const ALL = ["catalog", "import", "orders", "campaigns", "cli"];
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

const { names, write } = benchArgs(process.argv.slice(2));
const selected = names.length > 0 ? names : ALL.filter((name) => exists(name));
for (const name of selected) {
  if (!exists(name)) {
    process.stderr.write(`bench: no benchmark named ${name} (test/bench/${name}.ts)\n`);
    process.exitCode = 2;
    continue;
  }
  const bench = (await import(`./${name}.ts`)) as { run: () => Promise<void> };
  process.stdout.write(`\n== ${name} ==\n`);
  takeFigures();
  await bench.run();
  if (write) writeFigures(name);
}

function writeFigures(name: string): void {
  const figures = takeFigures();
  if (figures.length === 0) {
    process.stderr.write(`bench: ${name} hands no tables to --write; nothing written\n`);
    return;
  }
  const about = {
    date: new Date().toISOString().slice(0, 16).replace("T", " "),
    load: loadAverage(),
    node: process.version,
    command: `${benchSettings()}npm run bench -- ${name} --write`,
  };
  const path = writeFiguresPage(ROOT, name, figuresPage(name, figures, about));
  process.stdout.write(`figures written to ${path}\n`);
}

/** The BENCH_* settings of this run, as a command line starts: `BENCH_ROWS=1000 `. */
function benchSettings(): string {
  return Object.entries(process.env)
    .filter(([key]) => key.startsWith("BENCH_"))
    .map(([key, value]) => `${key}=${value} `)
    .join("");
}

function exists(name: string): boolean {
  return (
    /^[\w-]+$/.test(name) && existsSync(fileURLToPath(new URL(`./${name}.ts`, import.meta.url)))
  );
}

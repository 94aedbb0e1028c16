// Runs benchmarks by name: `npm run bench -- catalog` (default: every bench that exists).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const ALL = ["catalog", "import", "orders", "campaigns", "cli"];

const names = process.argv.slice(2);
const selected = names.length > 0 ? names : ALL.filter((name) => exists(name));
for (const name of selected) {
  if (!exists(name)) {
    process.stderr.write(`bench: no benchmark named ${name} (test/bench/${name}.ts)\n`);
    process.exitCode = 2;
    continue;
  }
  const bench = (await import(`./${name}.ts`)) as { run: () => Promise<void> };
  process.stdout.write(`\n== ${name} ==\n`);
  await bench.run();
}

function exists(name: string): boolean {
  return (
    /^[\w-]+$/.test(name) && existsSync(fileURLToPath(new URL(`./${name}.ts`, import.meta.url)))
  );
}

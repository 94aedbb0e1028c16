/** A command's implementation: its exit code (undefined is 0). */
// biome-ignore lint/suspicious/noExplicitAny: commander hands each action the arguments it parsed.
type Run = (...args: any[]) => Promise<number | undefined> | number | undefined;

/** The names of a module's exports that are command implementations. */
type RunNames<M> = { [K in keyof M]: M[K] extends Run ? K : never }[keyof M];

/**
 * The actions of a module of src/cli/commands/, loaded when one of them runs: `run("runSync")`
 * is commander's action for the module's runSync, which `load` (an `import()`) brings in, with
 * everything it imports, only once that command is chosen. The definitions (names, options,
 * help) are read at start-up; the implementations are not: start-up in proportion to the command
 * (docs/architecture/command-line.md, "Start-up").
 *
 * Each action runs as run-action.ts's `action` runs it: the exit code it returns, one line on
 * stderr for an error.
 */
export function lazyActions<M>(load: () => Promise<M>) {
  return <K extends RunNames<M>>(name: K) =>
    async (...args: unknown[]): Promise<void> => {
      const [{ action }, module] = await Promise.all([import("./run-action.js"), load()]);
      await action(module[name] as Run)(...args);
    };
}

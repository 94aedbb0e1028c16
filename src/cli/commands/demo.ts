import type { Command } from "commander";

/** Registers the `demo` command(s). */
export function register(_program: Command): void {}

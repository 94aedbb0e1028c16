import type { Command } from "commander";

/** Registers the `catalog` command(s). */
export function register(_program: Command): void {}

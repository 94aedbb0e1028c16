import type { Command } from "commander";

/** Registers the `dashboard` command(s). */
export function register(_program: Command): void {}

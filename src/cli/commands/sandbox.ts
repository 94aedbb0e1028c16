import type { Command } from "commander";

/** Registers the `sandbox` command(s). */
export function register(_program: Command): void {}

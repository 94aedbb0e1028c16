import type { Command } from "commander";

/** Registers the `worker` command(s). */
export function register(_program: Command): void {}

import type { Command } from "commander";

/** Registers the `orders` command(s). */
export function register(_program: Command): void {}

import { UserError } from "./user-error.js";

/** A configuration setting is missing or invalid; the message names the setting. */
export class ConfigError extends UserError {
  override readonly name = "ConfigError";
  constructor(
    readonly setting: string,
    problem: string,
  ) {
    super(`${setting}: ${problem}`);
  }
}

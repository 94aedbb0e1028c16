// The library: everything the CLI does can be done by importing these.

export * from "./api/index.js";
export { type Config, loadConfig } from "./config.js";
export { ConfigError } from "./errors/config-error.js";
export { RunError } from "./errors/runtime-error.js";
export { UserError } from "./errors/user-error.js";
export { createLogger, maskEmails } from "./log.js";
export * from "./money.js";

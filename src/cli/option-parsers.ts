import { InvalidArgumentError } from "commander";
import { UserError } from "../errors/user-error.js";

/** A whole number of at least 1 (`--concurrency`, `--lock-duration`). */
export function positiveWhole(value: string): number {
  if (!/^[1-9]\d*$/.test(value))
    throw new InvalidArgumentError("must be a whole number of at least 1");
  return Number(value);
}

/** A TCP port; 0 asks the system for a free one. */
export function portNumber(value: string): number {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535)
    throw new InvalidArgumentError("must be a port number from 0 to 65535");
  return Number(value);
}

/**
 * `value` of `flag` as a whole number from `min` to `max`; anything else is a UserError naming
 * the flag (the CLI prints it in one line and exits 2).
 */
export function wholeNumber(
  flag: string,
  value: string,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= min && n <= max)) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new UserError(`${flag} must be a whole number ${range} (got ${value})`);
  }
  return n;
}

/** Collects a repeatable option: each use adds its value to the list. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** A 2-letter country code (`--country`), upper-cased; anything else names the flag. */
export function countryCode(flag: string, value: string): string {
  const code = value.toUpperCase();
  if (!/^[A-Z]{2}$/.test(code)) {
    throw new UserError(`${flag} must be an ISO 3166 alpha-2 code like GB (got ${value})`);
  }
  return code;
}

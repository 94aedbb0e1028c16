import { InvalidArgumentError } from "commander";

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

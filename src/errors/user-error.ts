/**
 * A mistake the user can fix: bad input, bad usage or bad configuration.
 * The CLI prints its message as one line (no stack trace) and exits with `exitCode` (2).
 */
export class UserError extends Error {
  override readonly name: string = "UserError";
  readonly exitCode: number = 2;
}

/**
 * A run-time failure with a message fit for the user (exit 1), such as a sync that failed
 * and left the current snapshot in place. The CLI prints the message as one line.
 */
export class RunError extends Error {
  override readonly name: string = "RunError";
  readonly exitCode: number = 1;
}

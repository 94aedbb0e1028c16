// What a write to an output whose reader went away fails with (docs/architecture/audit.md,
// "Output that cannot be written"): a base module, so the CLI's output layer and the log's
// writes above the progress bar tell it apart alike, without loading the logger at start-up.

/** Errors of a stream whose reader is gone: the output is dropped, the command goes on. */
const GONE = new Set(["EPIPE", "EIO", "ECONNRESET", "ERR_STREAM_DESTROYED", "EBADF"]);

/** True when `error` says the output's reader is gone (`| head`, a closed terminal). */
export function isClosedOutput(error: unknown): boolean {
  return GONE.has((error as NodeJS.ErrnoException | undefined)?.code ?? "");
}

// The CLI's output layer for a reader that went away (docs/architecture/audit.md, "Output that
// cannot be written"): a closed or broken stdout or stderr (`| head`, a closed terminal) ends no
// command between its work and its audit entry.

import { isClosedOutput } from "../closed-output.js";

let installed = false;

/**
 * Makes a write to a closed stdout or stderr a no-op instead of an unhandled 'error' event that
 * kills the process mid-command. The command runs to its end (its work, then its entry) and
 * exits with its own code; what it would have printed is lost, as `| head` meant. Any other
 * error of the stream is thrown as before.
 */
export function quietOnClosedOutput(): void {
  if (installed) return;
  installed = true;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (!isClosedOutput(error)) throw error;
    });
  }
}

/** True once stdout's reader went away: a long listing stops formatting what nobody reads. */
export function stdoutGone(): boolean {
  return process.stdout.destroyed || !process.stdout.writable;
}

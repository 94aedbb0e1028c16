/**
 * The workers' start was given up (a stop signal while Redis had not answered yet): nothing
 * was started, so there is nothing to finish; the worker command exits 0.
 */
export class StartCancelled extends Error {
  override readonly name: string = "StartCancelled";

  constructor() {
    super("stopped before Redis answered; nothing had started");
  }
}

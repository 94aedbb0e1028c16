import { RunError } from "../errors/run-error.js";

/** The shrink guard held: the new catalog is much smaller than the current one (exit 1). */
export class ShrinkRefusedError extends RunError {
  override readonly name = "ShrinkRefusedError";
  constructor(
    readonly previousCount: number,
    readonly newCount: number,
    readonly maxShrink: number,
    /** How the filters changed since the current snapshot, when they did ("countries: - -> US"). */
    readonly filterChange?: string,
  ) {
    const percent = Math.round((1 - newCount / previousCount) * 1000) / 10;
    const why = filterChange
      ? `; the filters differ from the current snapshot's (${filterChange}), which may explain it`
      : "";
    super(
      `catalog sync refused to publish: ${newCount} products is ${percent}% fewer than the current ${previousCount} ` +
        `(more than ${Math.round(maxShrink * 100)}%)${why}; the current snapshot is unchanged; ` +
        "rerun with --allow-shrink if the catalog really shrank",
    );
  }
}

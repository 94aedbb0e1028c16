import { UserError } from "../../errors/user-error.js";
import { formatRowError, type RowError } from "../validation/row-error.js";

/**
 * The order file cannot be read at all: a bad header, a quote that never closes, a missing
 * file. Unlike a row error, no row after it can be trusted, so the import stops (exit 2).
 */
export class OrderFileError extends UserError {
  override readonly name = "OrderFileError";
  constructor(
    readonly file: string,
    readonly errors: RowError[],
  ) {
    super(`${file}: ${errors.map(formatRowError).join("; ")}`);
  }
}

import { UserError } from "../errors/user-error.js";

/** Nothing to show or diff: no sync has published a snapshot in this data directory. */
export class NoSnapshotError extends UserError {
  override readonly name = "NoSnapshotError";
  constructor(readonly catalogDir: string) {
    super(`no catalog snapshot in ${catalogDir}; run \`giftjobs catalog sync\` first`);
  }
}

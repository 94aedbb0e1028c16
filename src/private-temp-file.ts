import { type FileHandle, mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UserError } from "./errors/user-error.js";

/** A file only this process reads, gone from the folder as soon as it is open where it can be. */
export interface PrivateTempFile {
  handle: FileHandle;
  /** Removes what is left: the folder, where it could not be removed at once; closes the file. */
  close(): Promise<void>;
}

/**
 * A new, empty file in a private folder under `parent` (TMPDIR by default): 0600 in a 0700
 * folder, and unlinked as soon as it is open where the system allows it, so that a crashed
 * process leaves nothing behind. The import's spool and the paid memory's file lookup keep rows
 * that name people in such files. `what` names the file and `room` the room it needs, in the
 * one-line error when it cannot be made (TMPDIR not writable, say).
 */
export async function openPrivateTempFile(
  what: string,
  room: string,
  parent = tmpdir(),
): Promise<PrivateTempFile> {
  let dir: string | undefined;
  let handle: FileHandle;
  try {
    dir = await mkdtemp(join(parent, "giftjobs-"));
    handle = await open(join(dir, "file"), "w+", 0o600);
  } catch (error) {
    if (dir) await rm(dir, { recursive: true, force: true });
    throw new UserError(
      `cannot create ${what} in ${parent} (set TMPDIR to a writable folder with room for ${room}): ${(error as Error).message}`,
    );
  }
  let leftover: string | undefined;
  try {
    await rm(dir, { recursive: true });
  } catch {
    // Windows refuses to delete an open file: the folder goes at close instead.
    leftover = dir;
  }
  return {
    handle,
    close: async () => {
      await handle.close();
      if (leftover) await rm(leftover, { recursive: true, force: true });
    },
  };
}

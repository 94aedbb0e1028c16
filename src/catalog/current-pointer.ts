import { join } from "node:path";
import { DamagedFileError, readFileJson } from "./damaged-file-error.js";
import { replaceFileAtomically } from "./durable-files.js";
import { currentPointerPath, snapshotsDir } from "./snapshot-layout.js";

/** `current.json`: names the published snapshot readers use. */
interface CurrentPointer {
  snapshot: string;
  switched_at: string;
}

/** The current snapshot's name and directory, or undefined when nothing was published yet. */
export async function readCurrentPointer(
  dataDir: string,
): Promise<{ name: string; dir: string } | undefined> {
  const pointer = await readFileJson<CurrentPointer>(currentPointerPath(dataDir));
  if (!pointer) return undefined;
  // The pointer holds a bare name: it must not be able to point outside snapshots/.
  if (typeof pointer.snapshot !== "string" || !/^[\w.-]+$/.test(pointer.snapshot)) {
    throw new DamagedFileError(currentPointerPath(dataDir), undefined, "does not name a snapshot");
  }
  return { name: pointer.snapshot, dir: join(snapshotsDir(dataDir), pointer.snapshot) };
}

/** Points `current.json` at a published snapshot, atomically. */
export async function switchCurrentPointer(dataDir: string, name: string): Promise<void> {
  const pointer: CurrentPointer = { snapshot: name, switched_at: new Date().toISOString() };
  await replaceFileAtomically(currentPointerPath(dataDir), `${JSON.stringify(pointer)}\n`);
}

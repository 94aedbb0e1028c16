import { readFile } from "node:fs/promises";
import { FileAuditTrail } from "../audit/file-trail.js";
import { fileCatalogStore } from "../catalog/file-store.js";
import { UserError } from "../errors/user-error.js";
import { FileJournal } from "../orders/journal-store.js";
import { FilePaidMemory } from "../orders/paid-memory.js";
import type { Stores, UserStore, UsersFile } from "./types.js";

/** The stores as files under `dataDir`, product states in Redis (docs/architecture/overview.md). */
export function fileStores(dataDir: string): Stores {
  return {
    kind: "files",
    dataDir,
    catalog: fileCatalogStore(dataDir),
    journal: new FileJournal(dataDir),
    paidMemory: new FilePaidMemory(dataDir),
    audit: new FileAuditTrail(dataDir),
    productOverrides: (ledger) => ledger.productOverrides(),
    users: usersFile,
    close: async () => {},
  };
}

/** The users file (docs/operations.md, "Dashboard users"): kept as a file with either store. */
export function usersFile(file: UsersFile): UserStore {
  return { where: file.path, text: () => readUsersText(file.path, false, file.setting) };
}

/**
 * The users file's text; a file that cannot be read is one line naming `setting` and the path
 * (an empty text when it is missing and `missingIsEmpty`: `dashboard add-user` makes it).
 */
export async function readUsersText(
  path: string,
  missingIsEmpty = false,
  setting = "--users",
): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" && missingIsEmpty) return "";
    throw new UserError(
      `${setting} ${path}: ${code === "ENOENT" ? "no such file" : `cannot read it (${code ?? String(error)})`}`,
    );
  }
}

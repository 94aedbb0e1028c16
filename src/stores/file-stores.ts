import { FileAuditTrail } from "../audit/file-trail.js";
import { fileCatalogStore } from "../catalog/file-store.js";
import { readUsersFile } from "../dashboard/users-file.js";
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
  return { where: file.path, read: () => readUsersFile(file.path, file.setting) };
}

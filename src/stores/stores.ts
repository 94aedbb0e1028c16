import { usersFile } from "./file-stores.js";
import type { OpenStoresOptions, StoreSettings, Stores, UserStore, UsersFile } from "./types.js";

export type { OpenStoresOptions, StoreSettings, Stores, UserStore } from "./types.js";

/**
 * The stores the settings name. With GIFTJOBS_DATABASE_URL the database must answer and its
 * schema be current (one line naming the setting when not); pg is loaded only then
 * (docs/architecture/command-line.md, "Start-up").
 */
export async function openStores(
  settings: StoreSettings,
  options: OpenStoresOptions = {},
): Promise<Stores> {
  if (!settings.databaseUrl) return (await import("./file-stores.js")).fileStores(settings.dataDir);
  return (await import("./pg-stores.js")).openPgStores(settings, options);
}

/** Runs `fn` with the stores open; closes them after, whatever happens. */
export async function withStores<T>(
  settings: StoreSettings,
  fn: (stores: Stores) => Promise<T>,
  options: OpenStoresOptions = {},
): Promise<T> {
  const stores = await openStores(settings, options);
  try {
    return await fn(stores);
  } finally {
    await stores.close();
  }
}

/**
 * The dashboard's users where the stores keep them (the users file, with either store), without
 * opening the rest: a command's token is checked against them before the command runs.
 */
export function usersStore(file: UsersFile): UserStore {
  return usersFile(file);
}

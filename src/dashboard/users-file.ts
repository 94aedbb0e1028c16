import { rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { checkActorName, sameActor } from "../audit/actor.js";
import { UserError } from "../errors/user-error.js";
import { readUsersText } from "../stores/file-stores.js";
import type { UserStore } from "../stores/stores.js";
import { ROLES, type Role, SHARED_USER_NAME } from "./dashboard-user.js";
import { hashToken, newToken, parseHash, type TokenHash } from "./token-hash.js";

/**
 * The dashboard's users file (`--users FILE`; docs/operations.md, "Dashboard users"): one user
 * a line, `NAME:ROLES:ID:HASH`, e.g. `Ana Lima:operate,approve:3f2a9c0d1e4b:scrypt$16384$8$1$...`.
 * Blank lines and lines starting with `#` are skipped. The token itself is never in it.
 */
export interface UserEntry {
  name: string;
  roles: ReadonlySet<Role>;
  /** The public id the user's token starts with (token-hash.ts). */
  id: string;
  hash: TokenHash;
  /** The file's line, for messages. */
  line: number;
}

const HEADER = `# giftjobs dashboard users: NAME:ROLES:ID:HASH, one a line (docs/operations.md, "Dashboard users").
# Roles: view (read), operate (pause, resume, cancel, retry), approve. Add a user with
# \`giftjobs dashboard add-user NAME --roles ROLES --users FILE\`; delete a line to remove one.
`;

/**
 * The users of a store (src/stores: the users file, or where the stores keep them), read and
 * checked; none is a mistake, named with `where`.
 */
export async function usersOf(store: UserStore): Promise<UserEntry[]> {
  const path = store.where;
  const users = parseUsers(await store.text(), path);
  if (users.length === 0)
    throw new UserError(
      `${path}: no user in it: add one with \`giftjobs dashboard add-user NAME --roles view,operate,approve --users ${path}\``,
    );
  return users;
}

/**
 * The users of the file's text; `path` names it in messages.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function parseUsers(text: string, path: string): UserEntry[] {
  const users: UserEntry[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const user = parseLine(line, `${path} line ${index + 1}`, index + 1);
    const sameName = users.find((u) => sameActor(u.name, user.name));
    const sameId = users.find((u) => u.id === user.id);
    const what = sameName ? `user ${JSON.stringify(user.name)}` : `token id ${user.id}`;
    const twin = sameName ?? sameId;
    if (twin)
      throw new UserError(`${path} line ${user.line}: ${what} is already on line ${twin.line}`);
    users.push(user);
  });
  return users;
}

function parseLine(line: string, where: string, number: number): UserEntry {
  const fields = line.split(":");
  if (fields.length !== 4)
    throw new UserError(
      `${where}: expected NAME:ROLES:ID:HASH (4 fields separated by colons), found ${fields.length}`,
    );
  const [rawName, rawRoles, id, rawHash] = fields as [string, string, string, string];
  const name = checkActorName(rawName, where);
  if (sameActor(name, SHARED_USER_NAME))
    throw new UserError(
      `${where}: the name ${SHARED_USER_NAME} is the shared token's: choose another`,
    );
  const roles = parseRoles(rawRoles, where);
  if (!/^[0-9a-f]{12}$/.test(id))
    throw new UserError(`${where}: the token id ${JSON.stringify(id)} is not 12 hex digits`);
  const hash = parseHash(rawHash.trim());
  if (typeof hash === "string") throw new UserError(`${where}: ${hash}`);
  return { name, roles, id, hash, line: number };
}

/** A comma-separated list of roles (the file's field, or add-user's `--roles`). */
export function parseRoles(text: string, where: string): ReadonlySet<Role> {
  const names = text
    .split(",")
    .map((r) => r.trim())
    .filter(Boolean);
  if (names.length === 0)
    throw new UserError(`${where}: no role: give one or more of ${ROLES.join(", ")}`);
  const unknown = names.find((r) => !(ROLES as readonly string[]).includes(r));
  if (unknown !== undefined)
    throw new UserError(
      `${where}: unknown role ${JSON.stringify(unknown)}: the roles are ${ROLES.join(", ")}`,
    );
  return new Set(names as Role[]);
}

/**
 * Adds a user with a new random token to the file (made, mode 0600, when missing) and returns
 * the token: the only time it is seen. The whole file is written anew beside it and renamed
 * over it, so a failure leaves the old file whole.
 */
export async function addUser(
  path: string,
  name: string,
  roles: ReadonlySet<Role>,
): Promise<{ token: string; name: string; roles: Role[] }> {
  const checked = checkActorName(name, "NAME");
  if (sameActor(checked, SHARED_USER_NAME))
    throw new UserError(`NAME: ${SHARED_USER_NAME} is the shared token's name: choose another`);
  const before = await readUsersText(path, true);
  const twin = parseUsers(before, path).find((u) => sameActor(u.name, checked));
  if (twin)
    throw new UserError(
      `${path} line ${twin.line}: user ${JSON.stringify(twin.name)} is already there: delete that line first to give them a new token`,
    );
  const { token, id } = newToken();
  const listed = ROLES.filter((r) => roles.has(r));
  const line = `${checked}:${listed.join(",")}:${id}:${await hashToken(token)}`;
  const start = before === "" ? HEADER : before.endsWith("\n") ? before : `${before}\n`;
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  try {
    await writeFile(temporary, `${start}${line}\n`, { mode: 0o600, flag: "wx" });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  return { token, name: checked, roles: listed };
}

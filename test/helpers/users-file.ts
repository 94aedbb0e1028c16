import { join } from "node:path";
import { addUser, parseRoles } from "../../src/dashboard/users-file.js";

/**
 * A users file in `dir` with one line per user (`roles` as `--roles` takes them); returns its
 * path and each user's token, by name.
 */
export async function usersFileWith(
  dir: string,
  users: Record<string, string>,
): Promise<{ path: string; tokens: Record<string, string> }> {
  const path = join(dir, "dashboard-users");
  const tokens: Record<string, string> = {};
  for (const [name, roles] of Object.entries(users))
    tokens[name] = (await addUser(path, name, parseRoles(roles, "--roles"))).token;
  return { path, tokens };
}

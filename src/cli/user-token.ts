import { readFile } from "node:fs/promises";
import { sameActor, setProvenActor } from "../audit/actor.js";
import { UserTokens } from "../dashboard/user-tokens.js";
import { usersOf } from "../dashboard/users-file.js";
import { UserError } from "../errors/user-error.js";
import type { UserStore } from "../stores/stores.js";

/**
 * A person proving who they are on the command line (docs/architecture/audit.md, "Who
 * acted"): the token `dashboard add-user` gave them, from `--token-file PATH` or
 * GIFTJOBS_USER_TOKEN, checked against the dashboard's users (`users`: the stores' users file,
 * which GIFTJOBS_USERS_FILE names; src/config.ts, usersFileSetting). The user it names becomes
 * the process's actor. The token is never printed, not even in an error.
 */
export async function proveUser(
  { tokenFile, users }: { tokenFile: string | undefined; users: UserStore | undefined },
  env = process.env,
): Promise<void> {
  const given = await givenToken(tokenFile, env);
  if (!given) return;
  if (!users)
    throw new UserError(
      `${given.setting} needs GIFTJOBS_USERS_FILE: the dashboard's users file (its --users) to check the token against`,
    );
  const user = await new UserTokens(await usersOf(users)).userOfToken(given.token);
  if (!user)
    throw new UserError(
      `${given.setting}: the token is no user's of ${users.where} (a token of \`giftjobs dashboard add-user\`, gjd.ID.SECRET)`,
    );
  const typed = env.GIFTJOBS_ACTOR?.trim();
  if (typed && !sameActor(typed, user.name))
    throw new UserError(
      `--as or GIFTJOBS_ACTOR says ${typed}, the token of ${given.setting} is ${user.name}'s: give one of them`,
    );
  setProvenActor(user);
}

/** The token given and where from; a token file wins over the environment. */
async function givenToken(
  tokenFile: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<{ token: string; setting: string } | undefined> {
  if (tokenFile !== undefined)
    return { token: await readToken(tokenFile), setting: "--token-file" };
  const token = env.GIFTJOBS_USER_TOKEN?.trim();
  return token ? { token, setting: "GIFTJOBS_USER_TOKEN" } : undefined;
}

async function readToken(path: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UserError(
      `--token-file ${path}: ${code === "ENOENT" ? "no such file" : `cannot read it (${code ?? "error"})`}`,
    );
  }
  const token = text.trim();
  if (token === "") throw new UserError(`--token-file ${path}: the file is empty`);
  return token;
}

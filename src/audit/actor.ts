// Who runs a command, for the audit trail and the four-eyes rule (docs/architecture/audit.md,
// "Who acted"): a user of the users file whose token the CLI checked (provenActor), else
// `--as NAME` (set into GIFTJOBS_ACTOR by src/cli/main.ts, so child processes inherit it),
// else GIFTJOBS_ACTOR, else the OS user. Where: the host and the process id. The dashboard
// names its signed-in user and the client's address instead (actorOfDashboard).
import { hostname, userInfo } from "node:os";
import { UserError } from "../errors/user-error.js";

export interface Actor {
  /** The person: `--as`, GIFTJOBS_ACTOR, the OS user, or the dashboard user. */
  name: string;
  /**
   * How the name was given: `env` is a claim (`--as`, which the CLI passes on as GIFTJOBS_ACTOR
   * so that child processes inherit it, or GIFTJOBS_ACTOR itself); the OS user is not;
   * `token` is a user of the users file whose token the CLI checked; `dashboard` the
   * dashboard's signed-in user (or its shared token, `dashboard`).
   */
  source: "env" | "os" | "token" | "dashboard";
  /** The host and pid of the process, or `dashboard <client address>`. */
  where: string;
  /** The roles of a user of the users file (`token`, or a named dashboard user). */
  roles?: ReadonlySet<string>;
}

/**
 * The identity of a name: what two names must share to be the same person. Trimmed, inner
 * spaces made one, NFKC (a full-width `Ａ` is `A`), then case-folded: upper then lower case
 * folds `ß` with `SS` and the Greek final sigma with `σ`, as toLowerCase alone does not.
 * Every comparison of actors goes through it (docs/architecture/audit.md, "Who acted").
 */
export function actorKey(name: string): string {
  const spaced = name.normalize("NFKC").trim().replace(/\s+/gu, " ");
  return spaced.toUpperCase().toLowerCase().normalize("NFKC");
}

/** Whether two names name the same person (actorKey). */
export function sameActor(a: string, b: string): boolean {
  return actorKey(a) === actorKey(b);
}

const NAME = /^[\p{L}\p{N}._@+-][\p{L}\p{N} ._@+-]{0,63}$/u;

/** Checks a name given by `--as` or GIFTJOBS_ACTOR; `setting` names where it came from. */
export function checkActorName(name: string, setting: string): string {
  const trimmed = name.trim();
  if (!NAME.test(trimmed))
    throw new UserError(
      `${setting}: ${JSON.stringify(name)} is not a name: 1 to 64 letters, digits, spaces or . _ @ + -`,
    );
  return trimmed;
}

let proven: Actor | undefined;

/**
 * Makes `user` (a user of the users file whose token src/cli/user-token.ts checked) the actor
 * of this process from now on; undefined forgets it.
 */
export function setProvenActor(user: { name: string; roles: ReadonlySet<string> } | undefined) {
  proven = user && { name: user.name, source: "token", where: processWhere(), roles: user.roles };
}

/** The actor of this process (the CLI or a worker). */
export function currentActor(env: NodeJS.ProcessEnv = process.env): Actor {
  if (proven) return proven;
  const where = processWhere();
  const given = env.GIFTJOBS_ACTOR;
  if (given !== undefined && given.trim() !== "") {
    return { name: checkActorName(given, "GIFTJOBS_ACTOR"), source: "env", where };
  }
  return { name: osUser(), source: "os", where };
}

/** A dashboard user, signed in with their token, acting from `address`. */
export function actorOfDashboard(
  user: { name: string; roles: ReadonlySet<string> },
  address: string | undefined,
): Actor {
  const where = `dashboard ${address ?? "unknown"}`;
  return { name: user.name, source: "dashboard", where, roles: user.roles };
}

function processWhere(): string {
  return `${hostname()} pid ${process.pid}`;
}

function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    // A uid with no passwd entry (a container's): the uid still names someone.
    return `uid ${process.getuid?.() ?? "unknown"}`;
  }
}

// Who runs a command, for the audit trail and the four-eyes rule (docs/architecture/audit.md):
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
   * so that child processes inherit it, or GIFTJOBS_ACTOR itself); the OS user is not.
   */
  source: "env" | "os" | "dashboard";
  /** The host and pid of the process, or `dashboard <client address>`. */
  where: string;
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

/** The actor of this process (the CLI or a worker). */
export function currentActor(env: NodeJS.ProcessEnv = process.env): Actor {
  const where = `${hostname()} pid ${process.pid}`;
  const given = env.GIFTJOBS_ACTOR;
  if (given !== undefined && given.trim() !== "") {
    return { name: checkActorName(given, "GIFTJOBS_ACTOR"), source: "env", where };
  }
  return { name: osUser(), source: "os", where };
}

/** A dashboard user, signed in with their token, acting from `address`. */
export function actorOfDashboard(name: string, address: string | undefined): Actor {
  return { name, source: "dashboard", where: `dashboard ${address ?? "unknown"}` };
}

function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    // A uid with no passwd entry (a container's): the uid still names someone.
    return `uid ${process.getuid?.() ?? "unknown"}`;
  }
}

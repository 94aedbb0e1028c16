import { createHmac, randomBytes } from "node:crypto";
import { actorKey } from "../audit/actor.js";
import type { DashboardUser, TokenCheck } from "./dashboard-user.js";
import { tokenId, tokenMatches } from "./token-hash.js";
import type { UserEntry } from "./users-file.js";

/** Tokens checked again without scrypt, at most; past it the memory starts afresh. */
const REMEMBERED = 256;

/**
 * The named users of a users file (docs/architecture/operators.md, "Dashboard users"). A token
 * is checked with scrypt against the one line its id names. A script sending `Authorization:
 * Bearer` with each request would pay that each time, so a token that matched is remembered,
 * as an HMAC under this process's key (never the token), for the process's life.
 *
 * Sessions are signed with a key of this process: the file holds nothing a session could be
 * forged from, and a restart logs everyone out.
 */
export class UserTokens implements TokenCheck {
  readonly sessionKey = randomBytes(32);
  readonly readingNeedsUser = true;
  private readonly byId: Map<string, UserEntry>;
  private readonly byName: Map<string, DashboardUser>;
  private readonly known = new Map<string, DashboardUser>();

  constructor(entries: readonly UserEntry[]) {
    this.byId = new Map(entries.map((e) => [e.id, e]));
    this.byName = new Map(
      entries.map((e) => [actorKey(e.name), { name: e.name, roles: e.roles, signedIn: true }]),
    );
  }

  async userOfToken(token: string): Promise<DashboardUser | undefined> {
    const id = tokenId(token);
    const entry = id === undefined ? undefined : this.byId.get(id);
    if (!entry) return undefined;
    const mark = createHmac("sha256", this.sessionKey).update(token).digest("base64url");
    const remembered = this.known.get(mark);
    if (remembered) return remembered;
    if (!(await tokenMatches(token, entry.hash))) return undefined;
    const user = this.byName.get(actorKey(entry.name))!;
    if (this.known.size >= REMEMBERED) this.known.clear();
    this.known.set(mark, user);
    return user;
  }

  userNamed(name: string): DashboardUser | undefined {
    return this.byName.get(actorKey(name));
  }
}

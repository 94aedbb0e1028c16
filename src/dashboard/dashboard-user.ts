/**
 * What a dashboard user may do (docs/architecture/operators.md, "Dashboard users"): every
 * user reads the pages (`view`); `operate` pauses, resumes, cancels and retries, and uses
 * bull-board's retry and clean; `approve` approves a held campaign.
 */
export const ROLES = ["view", "operate", "approve"] as const;
export type Role = (typeof ROLES)[number];

export interface DashboardUser {
  /** The person, as the users file names them; the audit trail records it. */
  name: string;
  roles: ReadonlySet<Role>;
  /**
   * False on a dashboard nobody signs in to (loopback, no token, no users file): the header
   * then offers no log-out.
   */
  signedIn: boolean;
}

/** The name the shared token (GIFTJOBS_DASHBOARD_TOKEN), or no token at all, acts under. */
export const SHARED_USER_NAME = "dashboard";

const ALL_ROLES: ReadonlySet<Role> = new Set(ROLES);

/** The user of the shared token: every role, as before there were named users. */
export const SHARED_USER: DashboardUser = {
  name: SHARED_USER_NAME,
  roles: ALL_ROLES,
  signedIn: true,
};

/** Whoever reaches a loopback dashboard with neither token nor users file. */
export const OPEN_USER: DashboardUser = { ...SHARED_USER, signedIn: false };

/**
 * How a dashboard tells who a request is: a token (the shared one, or a named user's), or the
 * name a signed session cookie carries.
 */
export interface TokenCheck {
  /** The user whose token `token` is; undefined for anything else. */
  userOfToken(token: string): Promise<DashboardUser | undefined>;
  /** The user a valid session names, if there still is one of that name. */
  userNamed(name: string): DashboardUser | undefined;
  /** The HMAC key of the session cookies. */
  readonly sessionKey: Buffer;
  /** True with named users: reading the pages needs a signed-in user too. */
  readonly readingNeedsUser: boolean;
}

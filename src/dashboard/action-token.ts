import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { ConfigError } from "../errors/config-error.js";
import { registerSecret } from "../log.js";
import {
  type DashboardUser,
  SHARED_USER,
  SHARED_USER_NAME,
  type TokenCheck,
} from "./dashboard-user.js";

export const DASHBOARD_TOKEN_ENV = "GIFTJOBS_DASHBOARD_TOKEN";

/**
 * Shorter than this is guessable; docs/operations.md, "Security", suggests
 * `openssl rand -base64 32`.
 */
const MIN_LENGTH = 16;

/** GIFTJOBS_DASHBOARD_TOKEN, trimmed; undefined when unset or empty. */
export function dashboardTokenFrom(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env[DASHBOARD_TOKEN_ENV]?.trim() || undefined;
}

/**
 * The one shared token of a dashboard without a users file (docs/architecture/operators.md,
 * "The dashboard's guards"): whoever has it acts as the user `dashboard`, with every role. The
 * session key is an HMAC of the token, so a session outlives a restart and a new token logs
 * every browser out.
 */
export class ActionToken implements TokenCheck {
  readonly sessionKey: Buffer;
  readonly readingNeedsUser = false;

  constructor(private readonly token: string) {
    if (token.length < MIN_LENGTH)
      throw new ConfigError(
        DASHBOARD_TOKEN_ENV,
        `must be at least ${MIN_LENGTH} characters: use a long random value (openssl rand -base64 32)`,
      );
    this.sessionKey = createHmac("sha256", token).update("giftjobs dashboard session").digest();
    registerSecret(token);
  }

  async userOfToken(candidate: string): Promise<DashboardUser | undefined> {
    return sameText(candidate, this.token) ? SHARED_USER : undefined;
  }

  userNamed(name: string): DashboardUser | undefined {
    return name === SHARED_USER_NAME ? SHARED_USER : undefined;
  }
}

/**
 * Compares in constant time: both sides are hashed to one length first, so neither the
 * length nor the first differing character of a guess shows in the time taken.
 */
function sameText(a: string, b: string): boolean {
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(a), digest(b)) && a.length > 0;
}

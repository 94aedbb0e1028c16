import { ConfigError } from "../errors/config-error.js";
import { registerSecret } from "../log.js";

const WEBHOOK_SECRET_ENV = "GIFTJOBS_WEBHOOK_SECRET";

/**
 * The signing secret of the service's webhooks, from GIFTJOBS_WEBHOOK_SECRET: `whsec_` and the
 * base64 key, as the service shows it. Missing or malformed: a ConfigError naming the variable
 * (never quoting the value). A good one is registered as a secret: no log line shows it.
 */
export function webhookSecretFrom(env: NodeJS.ProcessEnv = process.env): string {
  const secret = env[WEBHOOK_SECRET_ENV]?.trim();
  if (!secret) {
    throw new ConfigError(
      WEBHOOK_SECRET_ENV,
      "is not set: give the webhook signing secret the service shows (whsec_...)",
    );
  }
  const match = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(secret);
  if (!match || Buffer.from(match[1] as string, "base64").length < 16) {
    throw new ConfigError(
      WEBHOOK_SECRET_ENV,
      "must be whsec_ followed by the base64 key the service shows (at least 16 bytes)",
    );
  }
  // Registered for redaction where it is read, as the API key is where a client is made; the
  // key alone too, as the Standard Webhooks verifier holds it without its `whsec_`.
  registerSecret(secret);
  registerSecret(match[1]);
  return secret;
}

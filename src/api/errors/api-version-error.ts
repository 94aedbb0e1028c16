import { ApiError } from "./api-error.js";
import type { Outcome } from "./outcome.js";

/**
 * The service refused how the client is set up, whatever the order: 410 `version_removed`,
 * 400 `invalid_version` (GIFTJOBS_API_VERSION), 400 `insecure_protocol` (GIFTJOBS_API_URL not
 * HTTPS). Every order would get the same answer, so the campaign pauses, as for a refused API key.
 */
export class ApiVersionError extends ApiError {
  override readonly name = "ApiVersionError";
  readonly outcome: Outcome = "systemic";
}

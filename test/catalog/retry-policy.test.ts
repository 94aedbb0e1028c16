import { describe, expect, it } from "vitest";
import { ApiError, ServiceUnreachableError } from "../../src/api/errors/index.js";
import { withRetries } from "../../src/catalog/retry-policy.js";

const refused = () =>
  new ServiceUnreachableError({
    url: "http://127.0.0.1:1",
    reason: "connection refused by 127.0.0.1:1",
    type: "connection_refused",
  });

/** Runs withRetries over an attempt that always throws `make()`; returns the tries and the error. */
async function failing(make: () => Error, options = {}) {
  let tries = 0;
  const error = await withRetries(
    async () => {
      tries += 1;
      throw make();
    },
    { minDelayMs: 1, maxDelayMs: 2, ...options },
  ).catch((e: unknown) => e as Error);
  return { tries, error };
}

describe("withRetries", () => {
  it("gives up on an unreachable service after 3 tries, and says so", async () => {
    const { tries, error } = await failing(refused);
    expect(tries).toBe(3);
    expect(error).toBeInstanceOf(ServiceUnreachableError);
    expect(error.message).toBe(
      "cannot reach the service at http://127.0.0.1:1 (connection refused by 127.0.0.1:1) after 3 tries: is GIFTJOBS_API_URL right?",
    );
  });

  it("takes another number of tries when told, and keeps the full backoff for a 5xx", async () => {
    expect((await failing(refused, { unreachableTries: 1 })).tries).toBe(1);
    const server = await failing(
      () => new ApiError("ServerError", { status: 503, type: "http_503", message: "down" }),
    );
    expect(server.tries).toBe(5);
    expect(server.error.message).toBe("down");
  });
});

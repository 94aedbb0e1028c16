import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { ConfigError } from "../src/errors/config-error.js";

describe("configuration", () => {
  it("uses defaults and lets the environment win", () => {
    const config = loadConfig({
      env: { GIFTJOBS_PREFIX: "gj-test", GIFTJOBS_API_KEY: "k-123456" },
    });
    expect(config.prefix).toBe("gj-test");
    expect(config.redisUrl).toBe("redis://127.0.0.1:6379");
    expect(config.apiKey).toBe("k-123456");
    expect(config.orderRateLimitPerMinute).toBe(300);
  });

  it("names the setting that is wrong", () => {
    expect(() => loadConfig({ env: { GIFTJOBS_REDIS_URL: "http://x" } })).toThrow(
      /GIFTJOBS_REDIS_URL: must be a redis:\/\/ or rediss:\/\/ URL/,
    );
    expect(() => loadConfig({ env: { GIFTJOBS_API_URL: "nope" } })).toThrow(ConfigError);
    expect(() => loadConfig({ env: { GIFTJOBS_API_VERSION: "yesterday" } })).toThrow(
      /GIFTJOBS_API_VERSION/,
    );
    expect(() => loadConfig({ env: { GIFTJOBS_PREFIX: "a:b" } })).toThrow(/GIFTJOBS_PREFIX/);
  });

  it("GIFTJOBS_REQUIRE_APPROVAL is a switch: 1/0 or true/false, off by default", () => {
    expect(loadConfig({ env: {} }).requireApproval).toBe(false);
    expect(loadConfig({ env: { GIFTJOBS_REQUIRE_APPROVAL: "1" } }).requireApproval).toBe(true);
    expect(loadConfig({ env: { GIFTJOBS_REQUIRE_APPROVAL: "true" } }).requireApproval).toBe(true);
    expect(loadConfig({ env: { GIFTJOBS_REQUIRE_APPROVAL: "0" } }).requireApproval).toBe(false);
    expect(() => loadConfig({ env: { GIFTJOBS_REQUIRE_APPROVAL: "yes" } })).toThrow(
      'GIFTJOBS_REQUIRE_APPROVAL: must be 1 or 0 (true or false) (got "yes")',
    );
  });

  it("never shows the API key in an error", () => {
    try {
      loadConfig({
        env: { GIFTJOBS_API_KEY: "secret-key-value", GIFTJOBS_REQUEST_TIMEOUT_MS: "abc" },
      });
      expect.unreachable();
    } catch (error) {
      expect(String((error as Error).message)).not.toContain("secret-key-value");
      expect((error as Error).message).toMatch(/GIFTJOBS_REQUEST_TIMEOUT_MS/);
    }
  });
});

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

  it("an empty GIFTJOBS_DATA_DIR (or prefix, Redis or service URL) is refused, not taken for the default", () => {
    expect(() => loadConfig({ env: { GIFTJOBS_DATA_DIR: "" } })).toThrow(
      'GIFTJOBS_DATA_DIR: is set but empty: unset it to use the default ("./data"), or give a value',
    );
    expect(() => loadConfig({ env: { GIFTJOBS_PREFIX: "" } })).toThrow(
      /GIFTJOBS_PREFIX: is set but empty/,
    );
    // An optional setting left empty is simply not set.
    expect(loadConfig({ env: { GIFTJOBS_TEMPLATE_ID: "", GIFTJOBS_API_KEY: "" } })).toMatchObject({
      templateId: undefined,
      apiKey: undefined,
    });
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

  it("GIFTJOBS_REDIS_CLUSTER_NODES: seed nodes host:port; the prefix then needs a hash tag", () => {
    const config = loadConfig({
      env: {
        GIFTJOBS_REDIS_CLUSTER_NODES: "10.0.0.1:7000, redis-b.internal:7001,[::1]:7002",
        GIFTJOBS_PREFIX: "{giftjobs}",
      },
    });
    expect(config.redisClusterNodes).toEqual([
      { host: "10.0.0.1", port: 7000 },
      { host: "redis-b.internal", port: 7001 },
      { host: "::1", port: 7002 },
    ]);
    expect(loadConfig({ env: {} }).redisClusterNodes).toBeUndefined();
    expect(() => loadConfig({ env: { GIFTJOBS_REDIS_CLUSTER_NODES: "10.0.0.1" } })).toThrow(
      'GIFTJOBS_REDIS_CLUSTER_NODES: must be host:port,host:port,... (got "10.0.0.1")',
    );
    expect(() =>
      loadConfig({ env: { GIFTJOBS_REDIS_CLUSTER_NODES: "a:7000", GIFTJOBS_PREFIX: "giftjobs" } }),
    ).toThrow(/GIFTJOBS_PREFIX: "giftjobs" has no hash tag.*use "\{giftjobs\}"/);
    // `{}` is no hash tag to Redis; `{acme}-jobs` is one.
    expect(() =>
      loadConfig({ env: { GIFTJOBS_REDIS_CLUSTER_NODES: "a:7000", GIFTJOBS_PREFIX: "{}x" } }),
    ).toThrow(/has no hash tag/);
    expect(
      loadConfig({
        env: { GIFTJOBS_REDIS_CLUSTER_NODES: "a:7000", GIFTJOBS_PREFIX: "{acme}-jobs" },
      }).prefix,
    ).toBe("{acme}-jobs");
    expect(() =>
      loadConfig({
        env: {
          GIFTJOBS_REDIS_CLUSTER_NODES: "a:7000",
          GIFTJOBS_PREFIX: "{gj}",
          GIFTJOBS_REDIS_URL: "redis://127.0.0.1:6379/2",
        },
      }),
    ).toThrow(/GIFTJOBS_REDIS_URL: a Redis Cluster has database 0 only/);
  });
});

import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { ConfigError } from "../src/errors/config-error.js";
import { runCli } from "./helpers/cli.js";
import { tmpDir } from "./helpers/tmp-dir.js";

/** The message of what `run` throws. */
function thrown(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("nothing was thrown");
}

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

  it("GIFTJOBS_DATABASE_URL: unset means files; a bad one names the setting, never the password", () => {
    expect(loadConfig({ env: {} })).toMatchObject({
      databaseUrl: undefined,
      databaseSchema: "giftjobs",
    });
    expect(loadConfig({ env: { GIFTJOBS_DATABASE_URL: "" } }).databaseUrl).toBeUndefined();
    const url = "postgresql://app:pw@db:5432/gifts";
    expect(
      loadConfig({ env: { GIFTJOBS_DATABASE_URL: url, GIFTJOBS_DATABASE_SCHEMA: "gj_2" } }),
    ).toMatchObject({ databaseUrl: url, databaseSchema: "gj_2" });
    expect(() =>
      loadConfig({ env: { GIFTJOBS_DATABASE_URL: "mysql://app:s3cret@db/gifts" } }),
    ).toThrow(
      'GIFTJOBS_DATABASE_URL: must be a postgres:// or postgresql:// URL (got "mysql://***@db/gifts")',
    );
    expect(() => loadConfig({ env: { GIFTJOBS_DATABASE_SCHEMA: "Gift-Jobs" } })).toThrow(
      /^GIFTJOBS_DATABASE_SCHEMA: must be a lower-case name/,
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

  it("never shows the Redis password in an error, whichever setting is wrong", () => {
    const password = "redis-pw-8f3k2";
    // The URL itself wrong: a bad port, a mistyped scheme, an `@` left in the password.
    for (const url of [
      `redis://app:${password}@10.0.0.5:99999`,
      `redis//app:${password}@10.0.0.5:6379`,
      `redis://:${password}@x@[10.0.0.5]:6379`,
      `http://:${password}@10.0.0.5:6379`,
    ]) {
      const message = thrown(() => loadConfig({ env: { GIFTJOBS_REDIS_URL: url } }));
      expect(message, url).toMatch(/^GIFTJOBS_REDIS_URL: /);
      expect(message, url).not.toContain(password);
      expect(message, url).toContain("***@");
    }
    // Another setting wrong next to a good URL with a password.
    const beside = thrown(() =>
      loadConfig({
        env: {
          GIFTJOBS_REDIS_URL: `redis://:${password}@10.0.0.5:6379`,
          GIFTJOBS_REQUEST_TIMEOUT_MS: "abc",
          GIFTJOBS_PREFIX: "{gj}",
          GIFTJOBS_REDIS_CLUSTER_NODES: `redis://:${password}@10.0.0.6:7000`,
        },
      }),
    );
    expect(beside).toMatch(/^GIFTJOBS_REDIS_CLUSTER_NODES: must be host:port/);
    expect(beside).not.toContain(password);
    const timeout = thrown(() =>
      loadConfig({
        env: {
          GIFTJOBS_REDIS_URL: `redis://:${password}@10.0.0.5:6379`,
          GIFTJOBS_REQUEST_TIMEOUT_MS: "abc",
        },
      }),
    );
    expect(timeout).toMatch(/^GIFTJOBS_REQUEST_TIMEOUT_MS: .*\(got "abc"\)$/);
    expect(timeout).not.toContain(password);
  });

  it("a config file that is no valid JSON is reported without quoting its text", async () => {
    const file = join(await tmpDir("config"), "giftjobs.json");
    await writeFile(file, '{"redisUrl": redis://:file-pw-77aa@10.0.0.5:6379}');
    const message = thrown(() => loadConfig({ env: {}, file }));
    expect(message).toMatch(/^GIFTJOBS_CONFIG \(.*\): cannot be read: not valid JSON/);
    expect(message).not.toContain("file-pw");
  });

  it("the command prints a bad Redis URL without its password, in one line", async () => {
    const run = await runCli(["catalog", "show"], {
      GIFTJOBS_REDIS_URL: "redis://app:cli-pw-5521@127.0.0.1:99999",
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      'giftjobs: error: GIFTJOBS_REDIS_URL: must be a redis:// or rediss:// URL (got "redis://***@127.0.0.1:99999")\n',
    );
  });
});

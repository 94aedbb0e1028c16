import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { loadConfig, registerConfigSecrets } from "../src/config.js";
import { createLogger, maskEmails, redactSecrets, registerSecret } from "../src/log.js";
import { connectRedis } from "../src/redis/connection.js";
import { webhookSecretFrom } from "../src/webhooks/webhook-secret.js";

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { lines, destination };
}

describe("logger", () => {
  it("masks e-mail addresses", () => {
    expect(maskEmails("to jane.doe@example.com and bob@ex.org")).toBe(
      "to j***@example.com and b***@ex.org",
    );
  });

  it("redacts the API key and masks e-mails in messages and fields", () => {
    registerSecret("sk-live-abcdef123456");
    const { lines, destination } = capture();
    const log = createLogger({ destination, pretty: false });
    log.info(
      {
        apiKey: "sk-live-abcdef123456",
        to: "jane@example.com",
        headers: { "x-api-key": "sk-live-abcdef123456" },
      },
      "sent to jane@example.com with sk-live-abcdef123456",
    );
    log.error(new Error("failed with key sk-live-abcdef123456"));
    const out = lines.join("");
    expect(out).not.toContain("sk-live-abcdef123456");
    expect(out).not.toContain("jane@example.com");
    expect(out).toContain("j***@example.com");
    expect(out).toContain("[REDACTED]");
  });

  it("redacts the Redis password, written and decoded, once the config is registered", () => {
    const config = loadConfig({
      env: { GIFTJOBS_REDIS_URL: "redis://app:pw%40redis-4411@10.0.0.5:6379" },
    });
    registerConfigSecrets(config);
    const { lines, destination } = capture();
    const log = createLogger({ destination, pretty: false });
    log.error(
      { url: config.redisUrl, err: new Error("WRONGPASS for pw@redis-4411") },
      "cannot reach redis://app:pw%40redis-4411@10.0.0.5:6379",
    );
    const out = lines.join("");
    expect(out).not.toContain("redis-4411");
    expect(out).toContain("redis://app:[REDACTED]@10.0.0.5:6379");
  });

  it("redacts the password of a library user's Redis connection", () => {
    const redis = connectRedis({ redisUrl: "redis://:lib-pw-9034@127.0.0.1:6379" }, { lazy: true });
    redis.disconnect();
    expect(redactSecrets("AUTH lib-pw-9034 failed")).toBe("AUTH [REDACTED] failed");
  });

  it("redacts the webhook secret read from GIFTJOBS_WEBHOOK_SECRET, and its key alone", () => {
    const key = randomBytes(24).toString("base64");
    const secret = webhookSecretFrom({ GIFTJOBS_WEBHOOK_SECRET: `whsec_${key}` });
    const { lines, destination } = capture();
    const log = createLogger({ destination, pretty: false });
    log.warn({ secret, headers: { authorization: "Bearer x" } }, `signing with ${key}`);
    const out = lines.join("");
    expect(out).not.toContain(key);
    expect(out).not.toContain("Bearer x");
    expect(out.match(/\[REDACTED\]/g)).toHaveLength(3);
  });
});

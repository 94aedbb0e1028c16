import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, maskEmails, registerSecret } from "../src/log.js";

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
});

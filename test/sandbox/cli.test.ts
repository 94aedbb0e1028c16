import { describe, expect, it } from "vitest";
import { sandboxOptions } from "../../src/cli/commands/sandbox.js";
import { UserError } from "../../src/errors/user-error.js";
import { type CliChild, exited, finished, spawnCli } from "../helpers/cli.js";

// A child a test leaves running is stopped when that test ends (spawnCli, test/helpers/cli.ts).
const giftjobs = (args: string[]): CliChild => spawnCli(args);

const defaults = {
  port: "4010",
  host: "127.0.0.1",
  products: "250",
  seed: "1",
  balance: [] as string[],
};

describe("giftjobs sandbox", () => {
  it("turns flags into options", () => {
    expect(
      sandboxOptions({
        ...defaults,
        balance: ["USD=100000", "JPY=5000"],
        apiKey: "k",
        failRate: "0.25",
        dropRate: "1",
        latencyMs: "20",
        asyncCompleteMs: "0",
        orderRateLimit: "3000",
      }),
    ).toEqual({
      port: 4010,
      host: "127.0.0.1",
      products: 250,
      seed: 1,
      apiKey: "k",
      balances: { USD: "100000", JPY: "5000" },
      failRate: 0.25,
      dropRate: 1,
      latencyMs: 20,
      asyncCompleteMs: 0,
      orderRateLimit: 3000,
    });
  });

  it("refuses bad values with a message naming the flag", () => {
    const cases: [Partial<typeof defaults> & Record<string, unknown>, string][] = [
      [{ products: "abc" }, "--products"],
      [{ port: "70000" }, "--port"],
      [{ seed: "-1" }, "--seed"],
      [{ balance: ["USD:5"] }, "--balance"],
      [{ balance: ["usd=5"] }, "--balance"],
      [{ failRate: "1.5" }, "--fail-rate"],
      [{ dropRate: "x" }, "--drop-rate"],
      [{ latencyMs: "-5" }, "--latency-ms"],
      [{ asyncCompleteMs: "1e3" }, "--async-complete-ms"],
      [{ orderRateLimit: "0" }, "--order-rate-limit"],
      [{ apiKey: "" }, "--api-key"],
    ];
    for (const [flags, name] of cases) {
      expect(() => sandboxOptions({ ...defaults, ...flags })).toThrow(UserError);
      expect(() => sandboxOptions({ ...defaults, ...flags })).toThrow(name);
    }
  });

  it("exits 2 on a bad flag value", async () => {
    const result = await finished(giftjobs(["sandbox", "--products", "abc"]));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--products");
  });

  it("serves until SIGTERM, prints one line without the key, exits 0", async () => {
    const child = giftjobs([
      "sandbox",
      "--port",
      "0",
      "--products",
      "12",
      "--api-key",
      "s3cret-key",
    ]);
    const done = finished(child);
    const line = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout?.on("data", (chunk) => {
        out += chunk;
        if (out.includes("\n")) resolve(out);
      });
      child.on("close", () => reject(new Error(`exited early: ${out}`)));
    });
    expect(line).toMatch(
      /^sandbox listening on http:\/\/127\.0\.0\.1:\d+ \(12 products, api key: set\)\n$/,
    );
    expect(line).not.toContain("s3cret-key");
    const url = /http:\/\/[\d.:]+/.exec(line)?.[0];
    const ping = await fetch(`${url}/v2/ping`, { headers: { "X-Api-Key": "s3cret-key" } });
    expect(ping.status).toBe(200);
    child.kill("SIGTERM");
    const result = await done;
    expect(result.code).toBe(0);
    expect(result.stdout + result.stderr).not.toContain("s3cret-key");
  });

  // The tests' own helper (test/helpers/cli.ts): a child its test left running is stopped once
  // the test ends, as a timed-out test would leave one.
  let left: CliChild | undefined;
  it("a child left running by its test (the helper stops it after the test) ...", async () => {
    left = spawnCli(["sandbox", "--port", "0", "--products", "3"]);
    await new Promise<void>((resolve, reject) => {
      left!.stdout?.on("data", () => resolve());
      left!.on("close", () => reject(new Error(`exited early: ${left!.output()}`)));
    });
    expect(left.exitCode).toBeNull();
  });

  it("... has been stopped, by SIGTERM, before the next test", async () => {
    expect(left).toBeDefined();
    expect(left!.exitCode !== null || left!.signalCode !== null).toBe(true);
    const code = await exited(left!);
    expect({ code, signal: left!.signalCode }).toEqual({ code: 0, signal: null });
  });
});

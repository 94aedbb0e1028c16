import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpTransport, TransportFailure } from "../../src/api/transport.js";

/** A server of canned answers, one per path; it counts the connections it accepts. */
describe("httpTransport", () => {
  let server: http.Server;
  let base: string;
  let connections = 0;
  const body = JSON.stringify({ message: "pong", pad: "x".repeat(2000) });

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === "/gzip") {
        res.writeHead(200, { "content-encoding": "gzip", "x-api-version": "2024-02-05" });
        res.end(zlib.gzipSync(body));
      } else if (req.url === "/br") {
        res.writeHead(200, { "content-encoding": "br" });
        res.end(zlib.brotliCompressSync(body));
      } else if (req.url === "/cut") {
        // Promises more than it sends, then drops the connection.
        res.writeHead(200, { "content-length": "1000" });
        res.write("{");
        setTimeout(() => req.socket.destroy(), 20);
      } else if (req.url === "/echo") {
        let text = "";
        req.on("data", (c) => {
          text += c;
        });
        req.on("end", () =>
          res.end(JSON.stringify({ method: req.method, text, headers: req.headers })),
        );
      } else {
        res.end(body);
      }
    });
    server.on("connection", () => connections++);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const send = (
    path: string,
    extra: Partial<Parameters<ReturnType<typeof httpTransport>>[0]> = {},
  ) =>
    transport({
      method: "GET",
      url: new URL(`${base}${path}`),
      headers: {},
      timeoutMs: 2000,
      ...extra,
    });
  const transport = httpTransport();

  it("decompresses gzip and brotli bodies and reads headers", async () => {
    const gz = await send("/gzip");
    expect(gz.status).toBe(200);
    expect(gz.bytes.toString()).toBe(body);
    expect(gz.header("x-api-version")).toBe("2024-02-05");
    expect(gz.header("x-absent")).toBeNull();
    expect((await send("/br")).bytes.toString()).toBe(body);
  });

  it("sends the method, headers and body, and keeps the connection for the next request", async () => {
    await send("/plain");
    const before = connections;
    const answer = await send("/echo", {
      method: "POST",
      headers: { "content-type": "application/json", "x-idempotency-key": "k-1" },
      body: '{"a":1}',
    });
    const echoed = JSON.parse(answer.bytes.toString());
    expect(echoed).toMatchObject({ method: "POST", text: '{"a":1}' });
    expect(echoed.headers["x-idempotency-key"]).toBe("k-1");
    expect(connections).toBe(before);
  });

  it("a body cut short is a network failure, not a short success", async () => {
    const error = await send("/cut").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportFailure);
    expect((error as TransportFailure).kind).toBe("network");
  });

  it("times out a server that never answers, and honours an abort", async () => {
    const silent = http.createServer(() => {});
    silent.listen(0, "127.0.0.1");
    await once(silent, "listening");
    const url = new URL(`http://127.0.0.1:${(silent.address() as AddressInfo).port}/`);
    try {
      const timedOut = await transport({ method: "GET", url, headers: {}, timeoutMs: 100 }).catch(
        (e: unknown) => e,
      );
      expect((timedOut as TransportFailure).kind).toBe("timeout");
      const controller = new AbortController();
      const pending = transport({
        method: "GET",
        url,
        headers: {},
        timeoutMs: 5000,
        signal: controller.signal,
      });
      setTimeout(() => controller.abort(), 50);
      expect(((await pending.catch((e: unknown) => e)) as TransportFailure).kind).toBe("aborted");
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });
});

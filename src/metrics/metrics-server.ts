import { createServer, type Server } from "node:http";
import type { Registry } from "prom-client";
import type { Logger } from "../log.js";
import { closeServer, httpUrl, listen } from "./listen.js";

export interface MetricsServerOptions {
  registry: Registry;
  /** 0 picks a free port. */
  port: number;
  /** @defaultValue `127.0.0.1` */
  host?: string;
  log: Logger;
}

export interface MetricsServer {
  /** Where the metrics are: `http://host:port/metrics`. */
  url: string;
  close(): Promise<void>;
}

/** Serves `GET /metrics` in the Prometheus text format; every other path is 404. */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const host = options.host ?? "127.0.0.1";
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" || path !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    options.registry.metrics().then(
      (text) => res.writeHead(200, { "content-type": options.registry.contentType }).end(text),
      (error: Error) => {
        options.log.warn({ err: error }, "metrics: scrape failed");
        res.writeHead(500, { "content-type": "text/plain" }).end("metrics unavailable\n");
      },
    );
  });
  const port = await listen(server, options.port, host);
  return { url: httpUrl(host, port, "/metrics"), close: () => closeServer(server) };
}

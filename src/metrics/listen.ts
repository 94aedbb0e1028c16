import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/** Starts listening and resolves with the bound port (the real one when asked for port 0). */
export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** `http://host:port/`, with an IPv6 host in brackets. */
export function httpUrl(host: string, port: number, path = "/"): string {
  const shown = host.includes(":") ? `[${host}]` : host;
  return `http://${shown}:${port}${path}`;
}

/** Closes the server, dropping idle keep-alive connections so close does not wait on them. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeIdleConnections();
  });
}

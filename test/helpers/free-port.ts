import { createServer } from "node:net";

/** A port free on 127.0.0.1 (and, with `plus`, port + plus too: a cluster's bus port). */
export async function freePort(plus?: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = plus === undefined ? await anyPort() : 20_000 + Math.floor(Math.random() * 20_000);
    if (plus === undefined) return port;
    if ((await portFree(port)) && (await portFree(port + plus))) return port;
  }
  throw new Error("no free port found");
}

function anyPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

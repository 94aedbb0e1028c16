import { createServer } from "node:net";
import { freePort as anyFreePort } from "../../src/free-port.js";

/** A port free on 127.0.0.1 (and, with `plus`, port + plus too: a cluster's bus port). */
export async function freePort(plus?: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port =
      plus === undefined ? await anyFreePort() : 20_000 + Math.floor(Math.random() * 20_000);
    if (plus === undefined) return port;
    if ((await portFree(port)) && (await portFree(port + plus))) return port;
  }
  throw new Error("no free port found");
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

import { connect, createServer, type Server, type Socket } from "node:net";

export interface TcpProxy {
  /** Stops listening and cuts every connection: the address refuses connections. */
  close(): Promise<void>;
}

/**
 * A TCP proxy on 127.0.0.1:`port` to the server at `target` (a URL): the service as the worker
 * sees it at that address. Closed, nothing listens there (connections refused); opened again on
 * the same port, the same service (with its orders and idempotency records) answers again.
 */
export async function tcpProxy(port: number, target: string): Promise<TcpProxy> {
  const to = Number(new URL(target).port);
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    const upstream = connect(to, "127.0.0.1");
    for (const s of [socket, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {
        socket.destroy();
        upstream.destroy();
      });
    }
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  return {
    close: async () => {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

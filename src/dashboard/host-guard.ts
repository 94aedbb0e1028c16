import { isIPv4 } from "node:net";
import type { NextFunction, Request, Response } from "express";

const LOOPBACK = new Set(["localhost", "::1", "[::1]"]);

/**
 * True for the addresses that only this machine can reach: an IPv4 literal of 127/8, not any
 * name that starts with "127." (a name like 127.evil.example can be pointed at 127.0.0.1).
 */
export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || (isIPv4(host) && host.startsWith("127."));
}

/**
 * On a loopback bind, refuses requests whose Host header names another machine. A web page on
 * some other site could otherwise point its own host name at 127.0.0.1 (DNS rebinding) and read
 * the dashboard, or use its actions, from the operator's browser.
 */
export function loopbackHostOnly(req: Request, res: Response, next: NextFunction): void {
  const hostname = (req.headers.host ?? "").replace(/:\d+$/, "").toLowerCase();
  if (isLoopback(hostname)) {
    next();
    return;
  }
  res.status(421).type("text/plain").send("giftjobs dashboard: unexpected Host header\n");
}

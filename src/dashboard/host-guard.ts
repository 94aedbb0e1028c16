import { isIP, isIPv4 } from "node:net";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { UserError } from "../errors/user-error.js";

const LOOPBACK = new Set(["localhost", "::1"]);

/** Addresses that mean "every interface": no name of the machine, so never taken as a Host. */
const ANY_INTERFACE = new Set(["0.0.0.0", "::", ""]);

/** Methods that read only; the others change something and have their Origin checked. */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

const HOST_NAME = /^[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*$/;

/**
 * A host name as the guard compares it: lower case, IPv6 brackets and a final dot removed.
 * (`[::1]` and `::1`, `Dash.Example.COM.` and `dash.example.com` are one name.)
 */
function normalHost(name: string): string {
  return name
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.$/, "");
}

/**
 * The host name of a Host header, without its port; "" when there is none.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function hostOfHeader(header: string | undefined): string {
  const value = (header ?? "").trim();
  const bracketed = /^(\[[^\]]*\])(:\d+)?$/.exec(value);
  return normalHost(bracketed ? bracketed[1]! : value.replace(/:\d+$/, ""));
}

/**
 * True for the addresses that only this machine can reach: an IPv4 literal of 127/8, not any
 * name that starts with "127." (a name like 127.evil.example can be pointed at 127.0.0.1).
 */
export function isLoopback(host: string): boolean {
  const name = normalHost(host);
  return LOOPBACK.has(name) || (isIPv4(name) && name.startsWith("127."));
}

/**
 * A `--public-host` value, normalised; anything but a plain host name or IP address (a scheme,
 * a port, a path, a wildcard) is a UserError naming the option.
 */
export function publicHostName(value: string): string {
  const name = normalHost(value.trim());
  if (isIP(name) || HOST_NAME.test(name)) return name;
  throw new UserError(
    `--public-host must be a host name or IP address, without scheme, port or path (got ${JSON.stringify(value)})`,
  );
}

/**
 * The host names the dashboard answers to (docs/architecture/operators.md, "The dashboard's
 * guards"): this machine's loopback names, the bound address itself unless it is every interface,
 * and the `--public-host` names. A name an attacker owns can be pointed at the dashboard (DNS
 * rebinding) but is never among them.
 */
export function acceptedHosts(
  bindHost: string,
  publicHosts: readonly string[],
): (host: string) => boolean {
  const named = new Set(publicHosts.map(normalHost));
  const bound = normalHost(bindHost);
  if (!ANY_INTERFACE.has(bound)) named.add(bound);
  return (host: string): boolean => isLoopback(host) || named.has(normalHost(host));
}

/**
 * Refuses, with 421 and before any page or token is shown, a request whose Host header is not
 * an accepted name: on any bind, a web page on some other site could otherwise point its own
 * host name at the dashboard's address and read it, or use its actions, from the operator's
 * browser.
 */
export function hostGuard(accepts: (host: string) => boolean): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (accepts(hostOfHeader(req.headers.host))) {
      next();
      return;
    }
    res.status(421).type("text/plain").send("giftjobs dashboard: unexpected Host header\n");
  };
}

/**
 * Refuses, with 403, a request that changes something and says it comes from a page of another
 * site (an Origin header whose host is not accepted, or `null`). Without an Origin (curl, a
 * script) it goes on to the token and CSRF checks.
 */
export function originGuard(accepts: (host: string) => boolean): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const origin = req.headers.origin;
    if (SAFE_METHODS.has(req.method) || origin === undefined || accepts(originHost(origin))) {
      next();
      return;
    }
    res.status(403).type("text/plain").send("giftjobs dashboard: request from another site\n");
  };
}

/** The host name of an Origin header; "" for `null` or anything that is no URL. */
function originHost(origin: string): string {
  try {
    return normalHost(new URL(origin).hostname);
  } catch {
    return "";
  }
}

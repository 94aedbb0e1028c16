import { describe, expect, it } from "vitest";
import {
  acceptedHosts,
  hostOfHeader,
  isLoopback,
  publicHostName,
} from "../../src/dashboard/host-guard.js";

describe("the dashboard's loopback Host check", () => {
  it("takes this machine's own names and addresses", () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]"])
      expect(isLoopback(host), host).toBe(true);
  });

  it("refuses a name that merely starts like a loopback address (DNS rebinding)", () => {
    for (const host of ["127.evil.example", "127.0.0.1.evil.example", "127.0.0.1x", "evil.example"])
      expect(isLoopback(host), host).toBe(false);
  });
});

describe("the dashboard's accepted Host names", () => {
  it("reads the host name of a Host header, without port, brackets or final dot", () => {
    expect(hostOfHeader("Dash.Example.COM.:3000")).toBe("dash.example.com");
    expect(hostOfHeader("[::1]:3000")).toBe("::1");
    expect(hostOfHeader("[::1]")).toBe("::1");
    expect(hostOfHeader(undefined)).toBe("");
  });

  it("on 0.0.0.0: loopback names and the --public-host names, nothing else", () => {
    const accepts = acceptedHosts("0.0.0.0", ["dash.example.com"]);
    for (const host of ["dash.example.com", "localhost", "127.0.0.1", "::1"])
      expect(accepts(host), host).toBe(true);
    for (const host of ["0.0.0.0", "", "rebind.attacker.example", "dash.example.com.evil"])
      expect(accepts(host), host).toBe(false);
  });

  it("on a given address: that address too", () => {
    const accepts = acceptedHosts("10.0.0.5", []);
    expect(accepts("10.0.0.5")).toBe(true);
    expect(accepts("10.0.0.6")).toBe(false);
    expect(acceptedHosts("::", [])("::")).toBe(false);
  });

  it("--public-host takes a plain name or address, nothing with a scheme, port, path or wildcard", () => {
    expect(publicHostName("Dash.Example.com")).toBe("dash.example.com");
    expect(publicHostName("[2001:db8::1]")).toBe("2001:db8::1");
    for (const bad of [
      "https://dash.example.com",
      "dash.example.com:8443",
      "a/b",
      "*.example.com",
      "",
    ])
      expect(() => publicHostName(bad), bad).toThrow(/^--public-host must be a host name/);
  });
});

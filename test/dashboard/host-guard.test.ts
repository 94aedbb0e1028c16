import { describe, expect, it } from "vitest";
import { isLoopback } from "../../src/dashboard/host-guard.js";

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

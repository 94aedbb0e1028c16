import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApiClient } from "../../src/api/client.js";
import { fetchPages } from "../../src/catalog/page-fetcher.js";
import { tmpDir } from "../helpers/tmp-dir.js";

// A catalog service of three pages in a process of its own, so that it answers while this
// process is busy; it creates `marker` the moment page 2 is asked for.
const SERVER = `
const http = require("node:http");
const fs = require("node:fs");
const pages = {
  "": { catalog: [{ code: "A" }], pagination: { cursors: { after: "c1" } } },
  c1: { catalog: [{ code: "B" }], pagination: { cursors: { after: "c2" } } },
  c2: { catalog: [], pagination: { cursors: {} } },
};
const server = http.createServer((req, res) => {
  const after = new URL(req.url, "http://x").searchParams.get("after") ?? "";
  if (after === "c1") fs.writeFileSync(process.env.MARKER, "");
  res.setHeader("content-type", "application/json");
  res.end(JSON.stringify(pages[after]));
});
server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"));
`;

describe("fetchPages", () => {
  let dir: string;
  let server: ChildProcess;
  let url: string;

  beforeEach(async () => {
    dir = await tmpDir("pages");
    server = spawn(process.execPath, ["-e", SERVER], {
      env: { ...process.env, MARKER: join(dir, "page-2-requested") },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const port = await new Promise<string>((resolve) =>
      server.stdout?.once("data", (chunk) => resolve(String(chunk).trim())),
    );
    url = `http://127.0.0.1:${port}`;
  });

  afterEach(async () => {
    server.kill();
  });

  it("has the next page requested before the caller starts on this one", async () => {
    const client = new ApiClient({ baseUrl: url, apiKey: "test-key" });
    const marker = join(dir, "page-2-requested");
    const codes: string[] = [];
    let requestedWhileBusy: boolean | undefined;
    for await (const page of fetchPages({ client, query: { limit: 1 } })) {
      codes.push(...page.products.map((p) => p.code));
      if (page.number !== 1) continue;
      // Synchronous work on page 1, as writing a page is: the event loop does not turn until it
      // ends, so page 2 is being prepared meanwhile only if its request is already on the wire.
      const deadline = Date.now() + 5000;
      while (!existsSync(marker) && Date.now() < deadline) {}
      requestedWhileBusy = existsSync(marker);
    }
    expect(requestedWhileBusy).toBe(true);
    expect(codes).toEqual(["A", "B"]);
  });
});

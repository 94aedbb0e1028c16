import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../../src/package-root.js";
import { readLuaScript } from "../../src/redis/lua-scripts.js";
import { REPLIES } from "../../src/redis/replies.js";
import { asWritten, runScript, SCRIPTS } from "../../src/redis/scripts.js";
import { cleanPrefix, testRedis, uniquePrefix } from "../helpers/redis.js";
import { tmpDir } from "../helpers/tmp-dir.js";

const ROOT = packageRoot();
const FOLDERS = ["src/ledger/lua", "src/catalog/lua", "src/webhooks/lua", "src/campaigns/lua"];

/** The `.lua` files under `folder` (relative to the package root), includes/ apart. */
function luaFiles(folder: string): { scripts: string[]; includes: string[] } {
  const entries = readdirSync(join(ROOT, folder), { recursive: true, encoding: "utf8" });
  const lua = entries.filter((f) => f.endsWith(".lua")).map((f) => join(folder, f));
  const isInclude = (f: string) => relative(folder, f).split(/[\\/]/).includes("includes");
  return { scripts: lua.filter((f) => !isInclude(f)), includes: lua.filter(isInclude) };
}

const scripts = FOLDERS.flatMap((folder) => luaFiles(folder).scripts);
const includes = FOLDERS.flatMap((folder) => luaFiles(folder).includes);

/**
 * The one script whose ARGV holds more than ARGV[1]: RECORD takes an import's order and row texts
 * beside it, unescaped, since inside it their escaping and decoding were a quarter of its time.
 */
const TEXTS_BESIDE_ARGV1: Record<string, string> = {
  "src/ledger/lua/record.lua": "ARGV[2...]: each order's JSON, then its rows' identities and tails",
};

/** Lua without its comments (none of the scripts has `--` inside a string). */
function code(lua: string): string {
  return lua.replace(/--\[(=*)\[[\s\S]*?\]\1\]/g, "").replace(/--.*$/gm, "");
}

async function fixtures(files: Record<string, string>): Promise<string> {
  const dir = await tmpDir("lua");
  for (const [name, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, name)), { recursive: true });
    await writeFile(join(dir, name), text);
  }
  return dir;
}

describe("the ledger's Lua files", () => {
  it("finds the scripts and their includes", () => {
    expect(scripts.length).toBeGreaterThanOrEqual(13);
    expect(scripts).toContain("src/webhooks/lua/claim-message.lua");
    expect(scripts).toContain("src/catalog/lua/record-product-state.lua");
    expect(includes.length).toBeGreaterThan(0);
  });

  it.each(scripts)("%s opens with a header naming its KEYS, ARGV and output", (file) => {
    const text = readFileSync(join(ROOT, file), "utf8");
    expect(text.startsWith("--[[\n")).toBe(true);
    const header = text.slice(0, text.indexOf("]]"));
    expect(header).toMatch(/KEYS\[1\]/);
    expect(header).toMatch(/ARGV/);
    expect(header).toMatch(/Output:/);
  });

  it("registers every script file in SCRIPTS, each once", () => {
    const registered = Object.values(SCRIPTS).map((entry) => entry.file);
    expect([...registered].sort()).toEqual([...scripts].sort());
  });

  it.each(Object.entries(SCRIPTS))("%s takes the keys its header lists", (_name, entry) => {
    const text = readFileSync(join(ROOT, entry.file), "utf8");
    const header = text.slice(0, text.indexOf("]]"));
    const listed = [...header.matchAll(/^\s*KEYS\[(\d+)\]/gm)].map((m) => Number(m[1]));
    const most = typeof entry.keys === "number" ? entry.keys : entry.keys[1];
    const least = typeof entry.keys === "number" ? entry.keys : entry.keys[0];
    if (most !== Infinity) expect(Math.max(...listed)).toBe(most);
    expect(listed.length).toBeGreaterThanOrEqual(least);
  });

  it("answers only words of REPLIES, each with one meaning", () => {
    for (const file of scripts) {
      const text = code(readLuaScript(file));
      for (const [, word] of text.matchAll(/return \{'(\w+)'/g))
        expect(Object.keys(REPLIES), `${file} answers '${word}'`).toContain(word);
    }
    const used = scripts.flatMap((file) =>
      [...code(readLuaScript(file)).matchAll(/return \{'(\w+)'/g)].map((m) => m[1]),
    );
    for (const word of Object.keys(REPLIES)) expect(used, word).toContain(word);
  });

  it.each(scripts)("%s reads its ARGV as one JSON object of named fields, if any", (file) => {
    const text = code(readLuaScript(file));
    const reads = [...text.matchAll(/ARGV(\[[^\]]*\])?/g)].map((m) => m[0]);
    const decoded = text.match(/cjson\.decode\(ARGV\[1\]\)/g) ?? [];
    if (file in TEXTS_BESIDE_ARGV1) {
      // Its texts follow ARGV[1], read by their place in it, never decoded.
      expect(decoded.length, file).toBe(1);
      for (const read of reads.filter((r) => r !== "ARGV[1]"))
        expect(read, file).toMatch(/^ARGV\[[a-z_]+( [+-] [0-9a-z_ *]+)?\]$/);
      return;
    }
    for (const read of reads) expect(read, file).toBe("ARGV[1]");
    expect(decoded.length, file).toBe(reads.length);
  });

  it.each(scripts)("%s answers no bare numeric code", (file) => {
    const text = code(readLuaScript(file));
    expect(text, file).not.toMatch(/return -?\d+\s*$|return \{\s*-?\d/m);
  });

  it("defines scripts in one file: no other module calls defineCommand", () => {
    const sources = ["src", "jobs"].flatMap((folder) =>
      readdirSync(join(ROOT, folder), { recursive: true, encoding: "utf8" })
        .filter((f) => f.endsWith(".ts"))
        .map((f) => join(folder, f)),
    );
    const defining = sources.filter((f) =>
      /\.defineCommand\(/.test(readFileSync(join(ROOT, f), "utf8")),
    );
    expect(defining).toEqual(["src/redis/scripts.ts"]);
  });

  it("refuses a run with a wrong number of keys, naming the script", async () => {
    const redis = testRedis();
    try {
      await expect(runScript(redis, "giftjobsLedgerStart", ["a"], [])).rejects.toThrow(
        /giftjobsLedgerStart takes 8 keys, given 1/,
      );
    } finally {
      await redis.quit();
    }
  });

  it("sends a command of many characters as bytes, every character as it was", async () => {
    // Over 32,768 characters, two bytes and four of UTF-8 among them: the first argument goes
    // as a Buffer (ioredis then writes the command piece by piece, never as one string).
    const field = `USD ${"é€😀-".repeat(9_000)}`;
    const args = [JSON.stringify({ field, units: "5", seconds: 60 })];
    expect(Buffer.isBuffer(asWritten(args)[0])).toBe(true);
    expect(asWritten(["USD", "small"])).toEqual(["USD", "small"]);
    const redis = testRedis();
    const prefix = uniquePrefix("big-command");
    try {
      const key = `${prefix}:today`;
      const answer = await runScript(redis, "giftjobsLedgerCountImported", [key], args);
      expect(answer).toEqual(["counted", 5]);
      expect(await redis.hgetall(key)).toEqual({ [field]: "5" });
    } finally {
      await cleanPrefix(redis, prefix);
      await redis.quit();
    }
  });

  it.each(scripts)("%s defines every helper it calls, once, before it is called", (file) => {
    const text = code(readLuaScript(file));
    expect(text).not.toMatch(/@include/);
    const helpers = includes.flatMap((f) =>
      [...readFileSync(join(ROOT, f), "utf8").matchAll(/^local function (\w+)\(/gm)].map(
        (m) => m[1]!,
      ),
    );
    for (const helper of helpers) {
      const definitions = [...text.matchAll(new RegExp(`^local function ${helper}\\(`, "gm"))];
      expect(definitions.length, helper).toBeLessThanOrEqual(1);
      const definedAt = definitions[0]?.index ?? Number.POSITIVE_INFINITY;
      const firstCall = [...text.matchAll(new RegExp(`\\b${helper}\\(`, "g"))].find(
        (m) => m.index !== definedAt + "local function ".length,
      );
      if (firstCall)
        expect(definedAt, `${helper} called before it is defined`).toBeLessThan(firstCall.index);
    }
  });

  it("compiles in Redis, every script", async () => {
    const redis = testRedis();
    try {
      for (const file of scripts) {
        const lua = readLuaScript(file);
        // SCRIPT LOAD compiles without running. It adds to Redis's script cache only what the
        // ledger's own commands load there (the same text, the same SHA1).
        const sha = await redis.script("LOAD", lua);
        expect(sha, file).toBe(createHash("sha1").update(lua).digest("hex"));
      }
    } finally {
      await redis.quit();
    }
  });
});

describe("readLuaScript", () => {
  it("replaces an include line with the file's text, relative to the including file", async () => {
    const dir = await fixtures({
      "main.lua": '--[[ main ]]\n--- @include "lib/a"\nreturn a()\n',
      "lib/a.lua": '--- @include "b"\nlocal function a() return b() end\n',
      "lib/b.lua": "local function b() return 1 end\n",
      "b.lua": "error('the include is relative to lib/a.lua, not to main.lua')\n",
    });
    expect(readLuaScript(join(dir, "main.lua"))).toBe(
      "--[[ main ]]\nlocal function b() return 1 end\nlocal function a() return b() end\n" +
        "return a()\n",
    );
  });

  it("includes a file once, however many files include it, nested ones included", async () => {
    const dir = await fixtures({
      "main.lua": '--- @include "b"\n--- @include "c"\n--- @include "b.lua"\nreturn 0\n',
      "b.lua": "-- b\n",
      "c.lua": '--- @include "b"\n-- c\n',
    });
    const text = readLuaScript(join(dir, "main.lua"));
    expect(text).toBe("-- b\n-- c\nreturn 0\n");
  });

  it("throws an error naming a missing include and the file that includes it", async () => {
    const dir = await fixtures({ "main.lua": 'return 1\n--- @include "includes/nope"\n' });
    expect(() => readLuaScript(join(dir, "main.lua"))).toThrow(
      /main\.lua:2 includes "includes\/nope", but .*includes\/nope\.lua does not exist/,
    );
  });

  it("refuses an include cycle", async () => {
    const dir = await fixtures({
      "main.lua": '--- @include "a"\n',
      "a.lua": '--- @include "b"\n',
      "b.lua": '--- @include "a"\n',
    });
    expect(() => readLuaScript(join(dir, "main.lua"))).toThrow(
      /Lua include cycle: .*main\.lua -> .*a\.lua -> .*b\.lua -> .*a\.lua/,
    );
    const self = await fixtures({ "self.lua": '--- @include "self"\n' });
    expect(() => readLuaScript(join(self, "self.lua"))).toThrow(/Lua include cycle/);
  });

  it("refuses a line that starts like an include but is not one", async () => {
    const dir = await fixtures({ "main.lua": "--- @include includes/counts\n" });
    expect(() => readLuaScript(join(dir, "main.lua"))).toThrow(
      /main\.lua:1: not an include of the form/,
    );
  });

  it("throws for a script that does not exist", () => {
    expect(() => readLuaScript("src/ledger/lua/nope.lua")).toThrow(
      `Lua script not found: ${join(ROOT, "src/ledger/lua/nope.lua")}`,
    );
  });
});

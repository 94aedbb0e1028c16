import type { Redis } from "ioredis";
import { readLuaScript } from "./lua-scripts.js";

/**
 * Every Lua script of giftjobs, in one list: the command it is defined as, its file (whose
 * header names its KEYS, ARGV and replies) and how many keys it takes (`[least, most]` when it
 * varies: a key per running campaign, an optional index). See docs/architecture/ledger.md,
 * "The scripts".
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export const SCRIPTS = {
  giftjobsLedgerRecord: { file: "src/ledger/lua/record.lua", keys: [7, 8] },
  giftjobsLedgerTransition: { file: "src/ledger/lua/transition.lua", keys: [11, 12] },
  giftjobsLedgerRekey: { file: "src/ledger/lua/rekey.lua", keys: 8 },
  giftjobsLedgerReleaseRow: { file: "src/ledger/lua/release-row.lua", keys: 3 },
  giftjobsLedgerStart: { file: "src/ledger/lua/start.lua", keys: 8 },
  giftjobsLedgerClaimFollowed: { file: "src/ledger/lua/claim-followed.lua", keys: 1 },
  giftjobsLedgerDispatch: { file: "src/ledger/lua/dispatch.lua", keys: [1, Infinity] },
  giftjobsLedgerSetState: { file: "src/ledger/lua/set-state.lua", keys: 2 },
  giftjobsLedgerCancelPending: { file: "src/ledger/lua/cancel-pending.lua", keys: 8 },
  giftjobsLedgerArchive: { file: "src/ledger/lua/archive.lua", keys: 9 },
  giftjobsLedgerClearArchived: { file: "src/ledger/lua/clear-archived.lua", keys: 6 },
  giftjobsLedgerFinishRestore: { file: "src/ledger/lua/finish-restore.lua", keys: 5 },
  giftjobsLedgerPauseForLimit: { file: "src/ledger/lua/pause-for-limit.lua", keys: [1, Infinity] },
  giftjobsLedgerCountImported: { file: "src/ledger/lua/count-imported.lua", keys: 1 },
  giftjobsRecordProductState: { file: "src/catalog/lua/record-product-state.lua", keys: 1 },
  giftjobsClaimMessage: { file: "src/webhooks/lua/claim-message.lua", keys: 2 },
  giftjobsForgetMark: { file: "src/campaigns/lua/forget-mark.lua", keys: 2 },
  giftjobsForgetRecords: { file: "src/campaigns/lua/forget-records.lua", keys: 4 },
} as const satisfies Record<string, { file: string; keys: number | readonly [number, number] }>;

export type ScriptName = keyof typeof SCRIPTS;

/** Each script's text, its includes expanded: read on first use, once per process. */
const texts = new Map<ScriptName, string>();

function textOf(name: ScriptName): string {
  let text = texts.get(name);
  if (text === undefined) {
    text = readLuaScript(SCRIPTS[name].file);
    texts.set(name, text);
  }
  return text;
}

/**
 * Defines script `name` on `redis` at its first run on the connection: ioredis then sends
 * EVALSHA, not the script text, each call (and the text again only after a SCRIPT FLUSH or a
 * failover). One at a time, not all at once: a command reads and hashes only the scripts it
 * runs (all of them took some 17 ms of a command's start).
 */
function defineScript(redis: Redis, name: ScriptName): void {
  if (!(name in redis)) redis.defineCommand(name, { lua: textOf(name) });
}

type Command = (
  ...args: (string | number | Buffer | readonly (string | Buffer)[])[]
) => Promise<unknown>;

/**
 * Runs script `name` on `redis` with `keys` (as many as its entry in SCRIPTS says) and `args`;
 * defines it on the connection first if it is not.
 */
export function runScript(
  redis: Redis,
  name: ScriptName,
  keys: readonly string[],
  args: readonly (string | Buffer)[],
): Promise<unknown> {
  const expected = SCRIPTS[name].keys;
  const [least, most] = typeof expected === "number" ? [expected, expected] : expected;
  if (keys.length < least || keys.length > most) {
    const why = `${name} takes ${describe(expected)} keys, given ${keys.length}`;
    return Promise.reject(new RangeError(why));
  }
  defineScript(redis, name);
  const command = (redis as unknown as Record<string, Command>)[name]!;
  // The lists as they are, not spread: ioredis flattens a command's arguments, and RECORD of an
  // import's last batch of packed orders may take some hundreds of thousands (a spread of that
  // many overflows the stack).
  return command.call(redis, keys.length, keys, asWritten(args));
}

/**
 * Arguments of more than this many characters together are sent as bytes (see asWritten). Below
 * 32,768 the command as one string stays under V8's 128 KB for an ordinary heap object, even
 * when its characters take two bytes each.
 */
const BIG_COMMAND_CHARS = 32_768;

/**
 * The arguments, the first of them as bytes when they are many characters together: a command
 * holding a Buffer is written by ioredis into one Buffer, piece by piece, where a command of
 * strings is joined into one string for the socket. A string over 128 KB is allocated in V8's
 * large-object space, which made each of an import's RECORDs (500 rows, about 200 KB) cost some
 * 1.5 ms more to write: 2.9 s of a 1,000,000-row import's main thread (docs/architecture/import.md,
 * "Strings of a batch").
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function asWritten(args: readonly (string | Buffer)[]): readonly (string | Buffer)[] {
  let chars = 0;
  for (const arg of args) {
    chars += arg.length;
    if (chars > BIG_COMMAND_CHARS) break;
  }
  const first = args[0];
  if (chars <= BIG_COMMAND_CHARS || typeof first !== "string") return args;
  const written = args.slice();
  written[0] = Buffer.from(first);
  return written;
}

function describe(keys: number | readonly [number, number]): string {
  if (typeof keys === "number") return String(keys);
  return keys[1] === Infinity ? `at least ${keys[0]}` : `${keys[0]} to ${keys[1]}`;
}

/**
 * Lua scripts of the ledger. Each runs atomically in Redis, so row counts stay exact however
 * many workers update the same campaign. KEYS start with [orders, rows, counts] of one campaign
 * (same hash tag under a Cluster prefix); each script's header names the rest.
 *
 * Orders are stored under their number in the campaign (`next_order` in meta gives them out),
 * as JSON objects with the one-letter names of STORED_ORDER_FIELDS (codec.ts): `s` status, `i`
 * row identities, `g` generation (absent: 0), `k` idempotency key, `c`/`p` currency and price,
 * `t` tagged (the tags are not in `md`), `et`/`em` error type and message, `u` updated at; an
 * order written before may also hold `f` (face value). Rows are JSON arrays
 * `[line, order number, generation, ...]` (docs/architecture/ledger.md, "Redis keys").
 *
 * Sending (docs/architecture/campaigns.md, "Campaigns and the dispatcher"): an order recorded
 * `queued` is put on its campaign's `pending` list in the same script; the dispatcher moves order
 * numbers from `pending` to the campaign's `window` set (and adds their BullMQ jobs) only while the
 * campaign is running; an order leaves the window in the script that ends its job.
 *
 * The scripts are the files of src/ledger/lua/: each opens with a header of what it does, its
 * KEYS and ARGV and what it returns; the helpers they share are in src/ledger/lua/includes/,
 * pulled in by `--- @include` lines (see readLuaScript). Each constant below is a file's text,
 * its includes expanded, read once when this module loads.
 */

import { readLuaScript } from "../redis/lua-scripts.js";

const script = (name: string) => readLuaScript(`src/ledger/lua/${name}.lua`);

/** Moves an order to a new status when its current status is allowed: lua/transition.lua. */
export const TRANSITION = script("transition");

/** Takes followed orders that are due and leases them: lua/claim-followed.lua. */
export const CLAIM_FOLLOWED = script("claim-followed");

/** The start of an attempt, in one round trip: lua/start.lua. */
export const START = script("start");

/** Moves rows of an order to a new order of the next generation: lua/rekey.lua. */
export const REKEY = script("rekey");

/** Records new orders with their rows: lua/record.lua. */
export const RECORD = script("record");

/** Takes a failed_final row out so it can be recorded anew: lua/release-row.lua. */
export const RELEASE_ROW = script("release-row");

/** Moves orders of running campaigns from pending into their windows: lua/dispatch.lua. */
export const DISPATCH = script("dispatch");

/** Sets a campaign's state and keeps the running set in step: lua/set-state.lua. */
export const SET_STATE = script("set-state");

/** Cancels pending, scheduled and queued orders of a cancelled campaign: lua/cancel-pending.lua. */
export const CANCEL_PENDING = script("cancel-pending");

/** The last step of `orders archive`: lua/archive.lua. */
export const ARCHIVE = script("archive");

/** Empties the data keys of an archived campaign before a restore: lua/clear-archived.lua. */
export const CLEAR_ARCHIVED = script("clear-archived");

/** The last step of `orders restore`: lua/finish-restore.lua. */
export const FINISH_RESTORE = script("finish-restore");

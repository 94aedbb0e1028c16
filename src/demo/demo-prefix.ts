import { Ledger } from "../ledger/ledger.js";
import { commandClient, type RedisConnection } from "../redis/connection.js";

/** The Redis prefix of the demo's campaign: the configured one's, `-demo` added. */
export function demoPrefix(prefix: string): string {
  return `${prefix}-demo`;
}

/** `GIFTJOBS_PREFIX=PREFIX-demo`, as typed in a shell before a command. */
export function demoPrefixAssignment(prefix: string): string {
  return `GIFTJOBS_PREFIX=${shellWord(demoPrefix(prefix))}`;
}

/** `word` as one shell word: as it is when plain, else single-quoted. */
function shellWord(word: string): string {
  return /^[\w.:@%+=,/-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/**
 * For `orders list` finding no campaign: where the demo's campaign is, when there is one
 * (docs/commands.md, "The demo"); "" otherwise.
 */
export async function demoCampaignHint(redis: RedisConnection, prefix: string): Promise<string> {
  const names = await new Ledger(commandClient(redis), demoPrefix(prefix)).campaigns.names();
  if (names.length === 0) return "";
  return `the demo's campaign is under a Redis prefix of its own: ${demoPrefixAssignment(prefix)} npx giftjobs orders list\n`;
}

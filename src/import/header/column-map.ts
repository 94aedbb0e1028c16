import { UserError } from "../../errors/user-error.js";

/**
 * Parses `--map 'Source Header=field'` values into source -> field. The last `=` splits, so a
 * source header may itself hold `=`; both sides are trimmed like headers are.
 */
export function parseColumnMap(values: readonly string[]): Record<string, string> {
  const map: Record<string, string> = {};
  for (const value of values) {
    const at = value.lastIndexOf("=");
    const source = value.slice(0, at).trim();
    const field = value.slice(at + 1).trim();
    if (at === -1 || !source || !field) {
      throw new UserError(`--map ${JSON.stringify(value)}: expected 'Source Header=field'`);
    }
    if (Object.hasOwn(map, source))
      throw new UserError(`--map: ${JSON.stringify(source)} is mapped twice`);
    map[source] = field;
  }
  return map;
}

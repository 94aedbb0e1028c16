import { grouped } from "../../grouped.js";

/** How many names a warning or an error lists before "and N more". */
export const NAMES_LISTED = 5;

/** The most characters of one name shown: a header cell may be any length. */
const NAME_CHARS = 40;

/** A name cut to NAME_CHARS characters (with "..."): a header cell may be any length. */
export function cutName(name: string): string {
  if (name.length <= NAME_CHARS) return name;
  const chars = [...name];
  return chars.length > NAME_CHARS ? `${chars.slice(0, NAME_CHARS).join("")}...` : name;
}

/** A name as shown in a message: quoted, and cut (cutName). */
export function shownName(name: string): string {
  return JSON.stringify(cutName(name));
}

/**
 * Names for a one-line message, bounded: the first `max` (each as shownName, unless `show`
 * says otherwise), then "and N more". A file with 100,000 unknown columns gets a short line,
 * not a megabyte of them (docs/order-files.md, "Spreadsheets as exported").
 */
export function nameList(
  names: readonly string[],
  max = NAMES_LISTED,
  show: (name: string) => string = shownName,
): string {
  const listed = names.slice(0, max).map(show).join(", ");
  const more = names.length - max;
  return more > 0 ? `${listed} and ${grouped(more)} more` : listed;
}

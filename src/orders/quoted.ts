/**
 * A cell echoed in a message: in double quotes, every character that is not plainly visible
 * (controls, NUL, zero-width and bidi characters, lone surrogates) written as `\u{...}`, and
 * cut to `max` characters, so a message can never carry control bytes to a terminal, reorder
 * the text around it, or run to megabytes.
 */
export function quoted(text: string, max = 60): string {
  let out = "";
  let count = 0;
  for (const char of text) {
    if (count === max) return `"${out}..." (${text.length} characters)`;
    out += INVISIBLE.test(char)
      ? `\\u{${char.codePointAt(0)!.toString(16)}}`
      : char === '"'
        ? '\\"'
        : char;
    count += 1;
  }
  return `"${out}"`;
}

/** Controls, format characters (zero-width, bidi), separators other than space, lone surrogates. */
export const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;

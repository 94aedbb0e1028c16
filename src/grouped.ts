/**
 * A count with its thousands grouped by commas, as en-US writes it: `grouped(20000)` is
 * "20,000". Every message and page that prints a count uses it. Without Intl: a first
 * `toLocaleString` loads ICU's locale data, some 20 ms of a command's start, for three commas.
 * A number that is not a safe integer is written as `toLocaleString("en-US")` writes it.
 */
export function grouped(n: number): string {
  if (!Number.isSafeInteger(n)) return n.toLocaleString("en-US");
  const digits = String(Math.abs(n));
  let text = digits.slice(0, ((digits.length - 1) % 3) + 1);
  for (let i = text.length; i < digits.length; i += 3) text += `,${digits.slice(i, i + 3)}`;
  return n < 0 ? `-${text}` : text;
}

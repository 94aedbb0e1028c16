/**
 * The names in `known` that `input` was probably meant to be: those equal to it but for case
 * first, else those within a small edit distance (one edit for short names, two from 6
 * characters on), closest first. At most `max`; none when nothing is close.
 */
export function closeNames(input: string, known: Iterable<string>, max = 3): string[] {
  const wanted = input.toLowerCase();
  const names = [...known];
  const sameButCase = names.filter((name) => name !== input && name.toLowerCase() === wanted);
  if (sameButCase.length > 0) return sameButCase.slice(0, max);
  const limit = wanted.length >= 6 ? 2 : 1;
  return names
    .filter((name) => name !== input)
    .map((name) => ({ name, distance: editDistance(wanted, name.toLowerCase()) }))
    .filter(({ distance }) => distance <= limit)
    .sort((a, b) => a.distance - b.distance || a.name.localeCompare(b.name))
    .slice(0, max)
    .map(({ name }) => name);
}

/** `; did you mean "a"?` or `; did you mean "a" or "b"?`, or "" when there is none. */
export function didYouMean(suggestions: string[]): string {
  if (suggestions.length === 0) return "";
  const quoted = suggestions.map((name) => `"${name}"`);
  const last = quoted.pop()!;
  return `; did you mean ${quoted.length ? `${quoted.join(", ")} or ${last}` : last}?`;
}

/**
 * Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`: the optimal
 * string alignment distance. Names are short, so the plain table is enough.
 */
function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

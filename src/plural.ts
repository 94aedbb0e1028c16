/**
 * A noun as a count of it reads: `plural(1, "row")` is "row", any other count "rows". Every
 * message that prints a count beside its noun uses it, so none says "1 new rows".
 */
export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return count === 1 ? singular : pluralForm;
}

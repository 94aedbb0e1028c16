/**
 * Remembers each `reference` of the file with its line, so a second use is reported with the
 * first one's line. Memory is O(distinct references): a few tens of MB for a million rows.
 */
export class ReferenceTracker {
  private readonly lines = new Map<string, number>();

  /** Records `reference` at `line`; returns the earlier line when it was already used. */
  claim(reference: string, line: number): number | undefined {
    const earlier = this.lines.get(reference);
    if (earlier !== undefined) return earlier;
    this.lines.set(reference, line);
    return undefined;
  }

  get size(): number {
    return this.lines.size;
  }
}

import type { EarlierRow } from "../campaigns/earlier-payments.js";

import { currencyDecimals, fromUnits } from "../money.js";

/** What an import does with rows another campaign paid (docs/architecture/repeats.md). */
export type RepeatsChoice = "refuse" | "allow" | "skip";

/** The rows of this import that repeat rows of one earlier campaign: `orders import --json`'s `repeats`. */
export interface RepeatGroup {
  campaign: string;
  /** Rows of this file that repeat rows of that campaign. */
  rows: number;
  /** Their lines in this file (the first LINES_KEPT). */
  lines: number[];
  /** The earlier rows' lines in their file (the first LINES_KEPT). */
  lines_there: number[];
  /** Face value of the repeated rows, per currency (this file's). */
  face_value: Record<string, string>;
  /** The earlier rows by status. */
  statuses: Record<string, number>;
  /** When the earliest of the earlier rows was recorded (ISO). */
  recorded_at: string;
  /** When this file's very bytes were imported into that campaign, if they were (ISO). */
  same_file_at?: string;
  /** --skip-repeats: the rows were left out; --allow-repeats: recorded knowingly. */
  outcome: "refused" | "skipped" | "allowed";
}

const LINES_KEPT = 1000;

/** Gathers an import's repeated rows into one group per earlier campaign. */
export class RepeatGroups {
  private readonly groups = new Map<
    string,
    Omit<RepeatGroup, "recorded_at"> & { faceUnits: Map<string, bigint>; earliest: number }
  >();
  /** Rows of this file that repeat some earlier row (a row counts once, however many it repeats). */
  rows = 0;

  constructor(private readonly outcome: RepeatGroup["outcome"]) {}

  add(line: number, currency: string, faceUnits: bigint, earlier: readonly EarlierRow[]): void {
    this.rows += 1;
    // One loop over the earlier rows, no set, filter or date a row: this runs for every row of
    // a repeated file (docs/architecture/repeats.md); the earliest time becomes a date in list().
    const counted: string[] = [];
    for (const row of earlier) {
      const group = this.group(row.campaign);
      // A row counts once for each campaign it repeats: a few campaigns at most, a list serves.
      if (!counted.includes(row.campaign)) {
        counted.push(row.campaign);
        group.rows += 1;
        if (group.lines.length < LINES_KEPT) group.lines.push(line);
        group.faceUnits.set(currency, (group.faceUnits.get(currency) ?? 0n) + faceUnits);
      }
      if (group.lines_there.length < LINES_KEPT) group.lines_there.push(row.line);
      group.statuses[row.status] = (group.statuses[row.status] ?? 0) + 1;
      if (row.at < group.earliest) group.earliest = row.at;
    }
  }

  /** Notes the campaigns this very file was imported into before. */
  sameFile(imports: readonly { campaign: string; at: number }[]): void {
    for (const { campaign, at } of imports) {
      const group = this.groups.get(campaign);
      if (group && group.same_file_at === undefined)
        group.same_file_at = new Date(at).toISOString();
    }
  }

  list(): RepeatGroup[] {
    // By time, as numbers: no localeCompare of the ISO texts, which loads ICU (src/grouped.ts).
    return [...this.groups.values()]
      .sort((a, b) => a.earliest - b.earliest)
      .map(({ faceUnits, earliest, ...group }) => ({
        ...group,
        recorded_at: new Date(earliest).toISOString(),
        lines_there: [...new Set(group.lines_there)].sort((a, b) => a - b),
        face_value: Object.fromEntries(
          [...faceUnits].map(([c, units]) => [c, fromUnits(units, currencyDecimals(c))]),
        ),
      }));
  }

  private group(campaign: string) {
    let group = this.groups.get(campaign);
    if (!group) {
      group = {
        campaign,
        rows: 0,
        lines: [],
        lines_there: [],
        face_value: {},
        faceUnits: new Map(),
        statuses: {},
        earliest: Number.POSITIVE_INFINITY,
        outcome: this.outcome,
      };
      this.groups.set(campaign, group);
    }
    return group;
  }
}

/**
 * One line for an earlier campaign: `12 rows were paid before in campaign gifts (lines 2-13
 * there; 240.00 USD, completed, recorded 2026-11-20)`, led by the same file's import if it was.
 */
export function repeatLine(group: RepeatGroup): string {
  const money = Object.entries(group.face_value)
    .map(([c, v]) => `${v} ${c}`)
    .join(", ");
  const statuses = Object.entries(group.statuses)
    .sort((a, b) => b[1] - a[1])
    .map(([status, n], _, all) => (all.length === 1 ? status : `${n} ${status}`))
    .join(", ");
  const verb = group.rows === 1 ? "row was" : "rows were";
  const file = group.same_file_at
    ? `this file was imported as campaign ${group.campaign} on ${group.same_file_at.slice(0, 10)}: `
    : "";
  return `${file}${group.rows} ${verb} paid before in campaign ${group.campaign} (${linesText(group.lines_there)} there; ${money}, ${statuses}, recorded ${group.recorded_at.slice(0, 10)})`;
}

/** `line 4`, `lines 2-13`, `lines 2-5, 9, 12-14 and 3 more ranges`. */
function linesText(lines: readonly number[]): string {
  const sorted = [...new Set(lines)].sort((a, b) => a - b);
  const ranges: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    ranges.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  const shown = ranges.slice(0, 5).join(", ");
  const more = ranges.length > 5 ? ` and ${ranges.length - 5} more ranges` : "";
  return `${sorted.length === 1 ? "line" : "lines"} ${shown}${more}`;
}

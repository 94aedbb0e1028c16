// What every bench prints beside its figures, the same way: the machine's load average (the
// machine is shared: a ratio follows its load) and the spread of a figure over its rounds, so a
// reader can judge a median.
import { loadavg } from "node:os";
import { median } from "./median.js";

/** `load 1.23 0.98 0.75` (1, 5 and 15 minutes). */
export function loadAverage(): string {
  return `load ${loadavg()
    .map((n) => n.toFixed(2))
    .join(" ")}`;
}

/**
 * A figure over its rounds: `median 1.52x, spread 1.41x-1.63x (3 rounds)`; one round is the
 * figure alone. `format` writes one value (default: two decimals and an x, a ratio's).
 */
export function spread(
  values: readonly number[],
  format: (value: number) => string = (v) => `${v.toFixed(2)}x`,
): string {
  if (values.length === 0) return "no rounds";
  if (values.length === 1) return `${format(values[0]!)} (1 round)`;
  const low = Math.min(...values);
  const high = Math.max(...values);
  return `median ${format(median([...values]))}, spread ${format(low)}-${format(high)} (${values.length} rounds)`;
}

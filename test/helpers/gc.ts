import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/**
 * A real gc when V8 lets us turn it on at run time (vitest workers lack --expose-gc);
 * otherwise heapUsed includes garbage and only the bound's slack absorbs it.
 */
export function findGc(): (() => void) | undefined {
  try {
    setFlagsFromString("--expose-gc");
    return runInNewContext("gc") as () => void;
  } catch {
    return undefined;
  }
}

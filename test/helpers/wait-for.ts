/** Polls `fn` until it returns a value, or fails after `timeoutMs` naming `what` it waited for. */
export async function waitFor<T>(
  fn: () => Promise<T | undefined>,
  timeoutMs = 10_000,
  what = "a value",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** waitFor for a condition: polls until `check` is true, or fails after `timeoutMs` with `what`. */
export async function eventually(
  check: () => Promise<boolean>,
  what: string,
  timeoutMs = 30_000,
): Promise<void> {
  await waitFor(async () => ((await check()) ? true : undefined), timeoutMs, what);
}

/**
 * A "nothing happens" check: `check` stays true for `ms`, polled every 25 ms; fails as soon as it
 * turns false, naming `what` should have held. For the waits whose length is the thing tested
 * (a held campaign sends nothing, a cancelled one makes no more orders): a bounded time is the
 * only way to see that nothing came, and the poll fails at the first thing that does.
 */
export async function holdsFor(
  check: () => Promise<boolean>,
  ms: number,
  what: string,
): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (!(await check())) throw new Error(`no longer true: ${what}`);
    if (Date.now() >= end) return;
    await new Promise((resolve) => setTimeout(resolve, Math.min(25, end - Date.now())));
  }
}

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

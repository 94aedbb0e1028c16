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

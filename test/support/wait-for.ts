/**
 * Polls until `probe` returns a truthy value, for effects that land just after a response (access
 * logs are written when the response finishes). Not a timing assertion: it fails only when the
 * effect never appears within the bound.
 */
export async function waitFor<T>(probe: () => T | Promise<T>, { timeoutMs = 3000, intervalMs = 20 } = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

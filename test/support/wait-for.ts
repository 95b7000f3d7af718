/**
 * Polls until `probe` returns a truthy value and returns it, for effects that land just after a
 * response (access logs are written when the response finishes). Not a timing assertion: it fails
 * only when the effect never appears within the bound — and then it throws, naming what it waited
 * for, so that no caller can mistake a timeout for an answer.
 */
export async function waitFor<T>(probe: () => T | Promise<T>, { timeoutMs = 3000, intervalMs = 20, what = 'the condition' } = {}): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: T = await probe();
  while (!last) {
    if (Date.now() > deadline) throw new Error(`waitFor: ${what} did not hold within ${timeoutMs} ms (last value: ${String(last)})`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
    last = await probe();
  }
  return last;
}

import { nextAttemptDelayMs, outcomeOf, RETRY_DELAYS_MS, retryAfterMsOf } from './delivery-schedule';

describe('the delivery schedule', () => {
  it('when attempts fail, then the next ones follow the Standard Webhooks schedule within 10 % either way, and the tenth is the last', () => {
    expect(RETRY_DELAYS_MS.map((ms) => ms / 1000)).toEqual([5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400]);
    for (const [index, delay] of RETRY_DELAYS_MS.entries()) {
      expect(nextAttemptDelayMs(index + 1, undefined, 0)).toBe(Math.round(delay * 0.9));
      expect(nextAttemptDelayMs(index + 1, undefined, 0.999999)).toBeLessThanOrEqual(Math.round(delay * 1.1));
    }
    expect(nextAttemptDelayMs(10)).toBeUndefined();
  });

  it('when the endpoint gave a Retry-After, then it replaces the delay, but not the last attempt', () => {
    expect(nextAttemptDelayMs(3, 1000)).toBe(1000);
    expect(nextAttemptDelayMs(10, 1000)).toBeUndefined();
  });

  it('when answers are read, then 2xx is delivered, 410 gone, 3xx and the rest failed, and Retry-After counts on 429 and 503 only', () => {
    expect(outcomeOf(204)).toEqual({ kind: 'delivered' });
    expect(outcomeOf(410)).toEqual({ kind: 'gone' });
    expect(outcomeOf(301)).toEqual({ kind: 'failed' });
    expect(outcomeOf(undefined)).toEqual({ kind: 'failed' });
    expect(outcomeOf(429, '7')).toEqual({ kind: 'failed', retryAfterMs: 7000 });
    expect(outcomeOf(503, '2')).toEqual({ kind: 'failed', retryAfterMs: 2000 });
    expect(outcomeOf(500, '2')).toEqual({ kind: 'failed' });
  });

  it('when Retry-After is read, then seconds and HTTP dates are taken, capped at 24 h, and anything else is ignored', () => {
    const now = Date.parse('2026-12-02T10:00:00Z');
    expect(retryAfterMsOf('Wed, 02 Dec 2026 10:01:00 GMT', now)).toBe(60_000);
    expect(retryAfterMsOf('999999', now)).toBe(86_400_000);
    expect(retryAfterMsOf('soon', now)).toBeUndefined();
    expect(retryAfterMsOf('-5', now)).toBeUndefined();
    expect(retryAfterMsOf('2026', now)).toBe(2_026_000);
  });
});

import { MemoryRateLimitRepository } from './memory-rate-limit.repository';

describe('MemoryRateLimitRepository', () => {
  let now: number;
  let storage: MemoryRateLimitRepository;

  beforeEach(() => {
    now = 1_000_000;
    storage = new MemoryRateLimitRepository(() => now);
  });

  afterEach(() => storage.onModuleDestroy());

  it('when a key is hit up to its limit, then each hit is counted and none is blocked; the next is blocked for the block duration', async () => {
    const hits = [];
    for (let i = 0; i < 3; i++) hits.push(await storage.increment('client:a', 60_000, 3, 60_000));
    const over = await storage.increment('client:a', 60_000, 3, 60_000);

    expect(hits.map((hit) => [hit.totalHits, hit.isBlocked])).toEqual([
      [1, false],
      [2, false],
      [3, false],
    ]);
    expect(over).toEqual({ totalHits: 4, timeToExpire: 60, isBlocked: true, timeToBlockExpire: 60 });
  });

  it('when the window has ended and the block too, then the key starts a new window; while blocked, it stays blocked with the time left', async () => {
    for (let i = 0; i < 3; i++) await storage.increment('ip:1', 10_000, 2, 30_000);
    now += 12_000;
    const stillBlocked = await storage.increment('ip:1', 10_000, 2, 30_000);
    now += 20_000;
    const fresh = await storage.increment('ip:1', 10_000, 2, 30_000);

    expect(stillBlocked).toMatchObject({ isBlocked: true, timeToBlockExpire: 18 });
    expect(fresh).toEqual({ totalHits: 1, timeToExpire: 10, isBlocked: false, timeToBlockExpire: 0 });
  });

  it('when keys differ, then they count apart', async () => {
    await storage.increment('client:a', 60_000, 1, 60_000);
    const otherKey = await storage.increment('client:b', 60_000, 1, 60_000);
    const again = await storage.increment('client:a', 60_000, 1, 60_000);

    expect([otherKey.isBlocked, again.isBlocked]).toEqual([false, true]);
  });

  it('when a million hits are counted in one window, then the key holds one counter, and ended windows are swept', async () => {
    for (let i = 0; i < 1_000_000; i++) await storage.increment('client:busy', 60_000, 2_000_000, 60_000);
    await storage.increment('client:idle', 1_000, 5, 1_000);
    const last = await storage.increment('client:busy', 60_000, 2_000_000, 60_000);
    now += 5_000;
    storage.sweep();

    expect(last.totalHits).toBe(1_000_001);
    expect(storage.size).toBe(1);
  });
});

import { FixedClock } from '../../../test/support/fakes';
import { ApiClient } from './api-client';
import { ApiClientChanges } from './api-client-changes.port';
import { ApiClientStore, StoredApiClient } from './api-client-store.port';
import { ApiClientsService, REMEMBER_CLIENT_MS } from './api-clients.service';
import { ApiClientNameTaken, InvalidApiClient, InvalidToken } from './auth.errors';
import { hashClientToken } from './client-token';

class InMemoryApiClientStore extends ApiClientStore {
  readonly rows: StoredApiClient[] = [];
  lookups = 0;
  /** When set, a lookup waits for it before answering (to interleave a change). */
  gate?: Promise<void>;

  async insert(client: StoredApiClient): Promise<void> {
    if (this.rows.some((r) => r.name === client.name && !r.revokedAt)) throw new ApiClientNameTaken(client.name);
    this.rows.push(client);
  }
  async findByTokenHash(tokenHash: string): Promise<StoredApiClient | undefined> {
    this.lookups += 1;
    const found = this.rows.find((r) => r.tokenHash === tokenHash);
    await this.gate;
    return found;
  }
  async list(): Promise<ApiClient[]> {
    return [...this.rows].reverse();
  }
  async revokeActiveByName(name: string, at: Date): Promise<ApiClient | undefined> {
    const index = this.rows.findIndex((r) => r.name === name && !r.revokedAt);
    if (index < 0) return undefined;
    this.rows[index] = { ...this.rows[index], revokedAt: at };
    return this.rows[index];
  }
  async count(): Promise<number> {
    return this.rows.length;
  }
}

class ControlledChanges extends ApiClientChanges {
  private listeners: (() => void)[] = [];
  constructor(private isLive: boolean) {
    super();
  }
  get live(): boolean {
    return this.isLive;
  }
  subscribe(listener: () => void): void {
    this.listeners.push(listener);
  }
  announce(): void {
    for (const listener of this.listeners) listener();
  }
  setLive(live: boolean): void {
    this.isLive = live;
    this.announce();
  }
}

describe('ApiClientsService', () => {
  let store: InMemoryApiClientStore;
  let clock: FixedClock;
  let sut: ApiClientsService;

  beforeEach(() => {
    store = new InMemoryApiClientStore();
    clock = new FixedClock(new Date('2026-11-21T10:00:00Z'));
    sut = new ApiClientsService(store, clock);
  });

  it('when a client is created, then only the hash of its token is stored', async () => {
    const { client, token } = await sut.create({ name: 'web', role: 'partner', tenant: 'acme', expiresAt: null });

    expect(store.rows).toHaveLength(1);
    expect(store.rows[0].tokenHash).toBe(hashClientToken(token));
    expect(JSON.stringify(store.rows)).not.toContain(token);
    expect(client).toMatchObject({ name: 'web', role: 'partner', tenant: 'acme', revokedAt: null });
  });

  it('when the token is presented, then the client is recognised with its role and tenant', async () => {
    const { token } = await sut.create({ name: 'web', role: 'admin', tenant: 'acme', expiresAt: null });

    await expect(sut.authenticate(token)).resolves.toMatchObject({ name: 'web', role: 'admin', tenant: 'acme' });
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['unknown', 'pgw_not-a-real-token'],
    ['far too long', 'x'.repeat(10_000)],
  ])('when the token is %s, then InvalidToken', async (_, token) => {
    await sut.create({ name: 'web', role: 'partner', tenant: 'acme', expiresAt: null });

    await expect(sut.authenticate(token)).rejects.toBeInstanceOf(InvalidToken);
  });

  it('when the expiry passes, then the token stops working at that instant', async () => {
    const { token } = await sut.create({
      name: 'web',
      role: 'partner',
      tenant: 'acme',
      expiresAt: new Date('2026-11-21T11:00:00Z'),
    });
    clock.current = new Date('2026-11-21T10:59:59.999Z');
    await expect(sut.authenticate(token)).resolves.toBeDefined();

    clock.current = new Date('2026-11-21T11:00:00Z');

    await expect(sut.authenticate(token)).rejects.toBeInstanceOf(InvalidToken);
  });

  it('when a client is revoked, then its token is refused and its name can be reused', async () => {
    const { token } = await sut.create({ name: 'web', role: 'partner', tenant: 'acme', expiresAt: null });

    const revoked = await sut.revoke('web');

    expect(revoked?.revokedAt).toEqual(clock.current);
    await expect(sut.authenticate(token)).rejects.toBeInstanceOf(InvalidToken);
    await expect(sut.create({ name: 'web', role: 'partner', tenant: 'acme', expiresAt: null })).resolves.toBeDefined();
  });

  it('when nothing active has the name, then revoke answers undefined', async () => {
    await expect(sut.revoke('nobody')).resolves.toBeUndefined();
  });

  it.each([
    ['a name with spaces', { name: 'my app' }],
    ['an empty name', { name: '' }],
    ['a tenant with a slash', { tenant: 'a/b' }],
    ['an unknown role', { role: 'root' }],
    ['an expiry in the past', { expiresAt: new Date('2026-11-20T00:00:00Z') }],
  ])('when created with %s, then InvalidApiClient', async (_, override) => {
    const request = { name: 'web', role: 'partner', tenant: 'acme', expiresAt: null, ...override } as never;

    await expect(sut.create(request)).rejects.toBeInstanceOf(InvalidApiClient);
    expect(store.rows).toHaveLength(0);
  });

  describe('remembering clients', () => {
    let changes: ControlledChanges;

    beforeEach(() => {
      changes = new ControlledChanges(true);
      sut = new ApiClientsService(store, clock, changes);
    });

    it('when the change feed is live, then a token is read from the store once and then from memory', async () => {
      const { token } = await sut.create({ name: 'web', role: 'partner', tenant: 'acme', expiresAt: null });

      for (let i = 0; i < 5; i++) await sut.authenticate(token);

      expect(store.lookups).toBe(1);
    });

    it('when a change is announced, then the next request reads the store again and sees the revocation', async () => {
      const { token } = await sut.create({ name: 'web', role: 'partner', tenant: 'acme', expiresAt: null });
      await sut.authenticate(token);
      await sut.revoke('web');

      const beforeAnnouncement = await sut.authenticate(token);
      changes.announce();

      expect(beforeAnnouncement.name).toBe('web'); // the documented window: until the NOTIFY arrives
      await expect(sut.authenticate(token)).rejects.toBeInstanceOf(InvalidToken);
    });

    it('when the feed is down, then every request reads the store, and nothing read meanwhile is trusted once it is back', async () => {
      const { token } = await sut.create({ name: 'web', role: 'partner', tenant: 'acme', expiresAt: null });
      await sut.authenticate(token);
      changes.setLive(false);

      await sut.authenticate(token);
      await sut.authenticate(token);
      changes.setLive(true);
      await sut.authenticate(token);

      expect(store.lookups).toBe(4);
    });

    it('when a change is announced while a lookup is in flight, then that lookup is not remembered', async () => {
      const { token } = await sut.create({ name: 'web', role: 'partner', tenant: 'acme', expiresAt: null });
      let open!: () => void;
      store.gate = new Promise((resolve) => (open = resolve));
      const pending = sut.authenticate(token);
      changes.announce();
      open();
      await pending;
      store.gate = undefined;

      await sut.authenticate(token);

      expect(store.lookups).toBe(2);
    });

    it('when a remembered client expires, then its token is refused at that instant, and nothing is remembered longer than REMEMBER_CLIENT_MS', async () => {
      const expiring = await sut.create({ name: 'pilot', role: 'partner', tenant: 'acme', expiresAt: new Date(clock.current.getTime() + 10_000) });
      const lasting = await sut.create({ name: 'web', role: 'partner', tenant: 'acme', expiresAt: null });
      await sut.authenticate(expiring.token);
      await sut.authenticate(lasting.token);

      clock.current = new Date(clock.current.getTime() + 10_000);
      await expect(sut.authenticate(expiring.token)).rejects.toBeInstanceOf(InvalidToken);
      const lookupsBefore = store.lookups;
      clock.current = new Date(clock.current.getTime() + REMEMBER_CLIENT_MS);
      await sut.authenticate(lasting.token);

      expect(store.lookups).toBe(lookupsBefore + 1);
    });

    it('when a token is not of the shape the gateway makes, then it is refused with no lookup', async () => {
      for (const token of [
        'pgw_guess',
        `pgw_${'a'.repeat(42)}`,
        `pgw_${'a'.repeat(44)}`,
        `xyz_${'a'.repeat(43)}`,
        `pgw_${'a'.repeat(42)}=`,
        'x'.repeat(10_000),
      ]) {
        await expect(sut.authenticate(token)).rejects.toBeInstanceOf(InvalidToken);
      }

      expect(store.lookups).toBe(0);
      expect(sut.rememberedCount).toBe(0);
    });

    it('when an unknown token is presented again, then the refusal is remembered: one lookup, until a change or REMEMBER_CLIENT_MS', async () => {
      const guess = `pgw_${'g'.repeat(43)}`;

      for (let i = 0; i < 3; i++) await expect(sut.authenticate(guess)).rejects.toBeInstanceOf(InvalidToken);
      expect(store.lookups).toBe(1);
      expect(sut.rememberedUnknownCount).toBe(1);
      expect(sut.rememberedCount).toBe(0);

      clock.current = new Date(clock.current.getTime() + REMEMBER_CLIENT_MS);
      await expect(sut.authenticate(guess)).rejects.toBeInstanceOf(InvalidToken);
      expect(store.lookups).toBe(2);

      changes.announce();
      expect(sut.rememberedUnknownCount).toBe(0);
      await expect(sut.authenticate(guess)).rejects.toBeInstanceOf(InvalidToken);
      expect(store.lookups).toBe(3);
    });

    it('when many different tokens are guessed, then what is remembered of them stays bounded, and no client is pushed out of memory by them', async () => {
      const { token } = await sut.create({ name: 'web', role: 'partner', tenant: 'acme', expiresAt: null });
      await sut.authenticate(token);

      for (let i = 0; i < 10_050; i++) await expect(sut.authenticate(`pgw_${String(i).padStart(43, '0')}`)).rejects.toBeInstanceOf(InvalidToken);
      const lookups = store.lookups;
      await sut.authenticate(token);

      expect(sut.rememberedUnknownCount).toBe(10_000);
      expect(sut.rememberedCount).toBe(1);
      expect(store.lookups).toBe(lookups);
    });
  });
});

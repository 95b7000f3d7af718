import { Logger } from '@nestjs/common';
import { PostgresNotifications } from './postgres-notifications';

describe('PostgresNotifications', () => {
  beforeAll(() => {
    Logger.overrideLogger(false);
  });
  afterAll(() => {
    Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose', 'fatal']);
  });

  it('when a channel is asked for after listening started, then it is refused (its LISTEN would never be sent)', async () => {
    // Port 1 refuses at once: the channel is down, and listening goes on being retried.
    const sut = new PostgresNotifications('postgres://nobody@127.0.0.1:1/none', { heartbeatMs: 1000, heartbeatTimeoutMs: 500, maxReconnectDelayMs: 1000 });
    const early = sut.channel('early_channel');
    await sut.onModuleInit();

    expect(() => sut.channel('late_channel')).toThrow(/after listening started/);
    expect(sut.channel('early_channel').live).toBe(false);
    expect(early.live).toBe(false);
    await sut.onModuleDestroy();
  });
});

import { Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { Client } from 'pg';

/** One LISTEN channel, as the feature that subscribed sees it. */
export interface NotificationChannel {
  /** True while this process listens: every NOTIFY on the channel reaches the subscribers. */
  readonly live: boolean;
  /** `listener` is called on every notification, and whenever `live` changes. */
  subscribe(listener: () => void): void;
}

const CHANNEL_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export interface NotificationSettings {
  /** How often the listening connection is checked with a round trip. */
  readonly heartbeatMs: number;
  /** How long that round trip may take before the connection counts as lost. */
  readonly heartbeatTimeoutMs: number;
  /** Waits between attempts to listen again, growing to at most this. */
  readonly maxReconnectDelayMs: number;
}

const DEFAULTS: NotificationSettings = { heartbeatMs: 5_000, heartbeatTimeoutMs: 2_000, maxReconnectDelayMs: 5_000 };

/**
 * PostgreSQL LISTEN on one dedicated connection (not from the pool), for every channel a feature
 * asks for. While the connection is up and listening, the channels are live. When it fails — an
 * error, its end, or a heartbeat that does not come back in time — every channel goes down at
 * once (its subscribers are told, and must stop trusting what they remember), and listening starts
 * again with a growing delay. Coming back up tells the subscribers too: whatever was notified
 * while the connection was down was missed.
 */
export class PostgresNotifications implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('PostgresNotifications');
  private readonly listeners = new Map<string, Set<() => void>>();
  private client?: Client;
  private listening = false;
  private closed = false;
  private failures = 0;
  private started = false;
  private heartbeat?: NodeJS.Timeout;
  private reconnect?: NodeJS.Timeout;

  constructor(
    private readonly url: string,
    private readonly settings: NotificationSettings = DEFAULTS,
  ) {}

  channel(name: string): NotificationChannel {
    if (!CHANNEL_NAME.test(name)) throw new Error(`not a channel name: ${name}`);
    // LISTEN is sent when the connection opens: a channel asked for later would report live unheard.
    if (this.started && !this.listeners.has(name)) throw new Error(`channel ${name} asked for after listening started`);
    if (!this.listeners.has(name)) this.listeners.set(name, new Set());
    const listeners = this.listeners.get(name)!;
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the channel reads this object's state
    const notifications = this;
    return {
      get live() {
        return notifications.listening;
      },
      subscribe: (listener) => void listeners.add(listener),
    };
  }

  get live(): boolean {
    return this.listening;
  }

  /** Listens before the application serves, so that memory is usable from the first request. */
  async onModuleInit(): Promise<void> {
    this.started = true;
    await this.listen();
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnect);
    clearInterval(this.heartbeat);
    this.listening = false;
    await this.client?.end().catch(() => undefined);
  }

  private async listen(): Promise<void> {
    if (this.closed) return;
    const client = new Client({ connectionString: this.url, application_name: 'partner-gateway:listen', keepAlive: true, connectionTimeoutMillis: 5_000 });
    this.client = client;
    client.on('error', (error) => this.lost(client, error.message));
    client.on('end', () => this.lost(client, 'connection ended'));
    client.on('notification', (message) => this.tell(message.channel));
    try {
      await client.connect();
      for (const name of this.listeners.keys()) await client.query(`LISTEN ${name}`);
    } catch (error) {
      this.lost(client, (error as Error).message);
      return;
    }
    if (this.client !== client || this.closed) {
      // Closed, or replaced, while it connected: nobody else will end it.
      await client.end().catch(() => undefined);
      return;
    }
    this.listening = true;
    if (this.failures > 0) this.logger.log('Listening for database changes again');
    this.failures = 0;
    this.tellAll();
    this.heartbeat = setInterval(() => void this.check(client), this.settings.heartbeatMs);
    this.heartbeat.unref();
  }

  private async check(client: Client): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('heartbeat timed out')), this.settings.heartbeatTimeoutMs);
    });
    try {
      await Promise.race([client.query('SELECT 1'), late]);
    } catch (error) {
      this.lost(client, (error as Error).message);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The connection `client` failed: every channel goes down until listening starts again. */
  private lost(client: Client, reason: string): void {
    if (this.client !== client) return; // an older connection, already replaced
    this.client = undefined;
    clearInterval(this.heartbeat);
    const wasListening = this.listening;
    this.listening = false;
    void client.end().catch(() => undefined);
    if (this.closed) return;
    if (wasListening || this.failures === 0) {
      this.logger.warn({ reason }, 'Not listening for database changes: nothing remembered from the database is trusted until this is back');
    }
    if (wasListening) this.tellAll();
    this.failures += 1;
    const delay = Math.min(this.settings.maxReconnectDelayMs, 100 * 2 ** Math.min(this.failures, 10));
    this.reconnect = setTimeout(() => void this.listen(), delay);
    this.reconnect.unref();
  }

  private tell(channel: string): void {
    for (const listener of this.listeners.get(channel) ?? []) listener();
  }

  private tellAll(): void {
    for (const channel of this.listeners.keys()) this.tell(channel);
  }
}

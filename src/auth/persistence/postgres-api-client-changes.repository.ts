import { NotificationChannel, PostgresNotifications } from '../../database/postgres-notifications';
import { ApiClientChanges } from '../domain/api-client-changes.port';

/** The channel the api_clients trigger notifies (migration NotifyApiClientChanges1764057600000). */
export const API_CLIENTS_CHANGED = 'api_clients_changed';

/** Changes to api_clients, as PostgreSQL reports them on commit. */
export class PostgresApiClientChangesRepository extends ApiClientChanges {
  private readonly channel: NotificationChannel;

  constructor(notifications: PostgresNotifications) {
    super();
    this.channel = notifications.channel(API_CLIENTS_CHANGED);
  }

  get live(): boolean {
    return this.channel.live;
  }

  subscribe(listener: () => void): void {
    this.channel.subscribe(listener);
  }
}

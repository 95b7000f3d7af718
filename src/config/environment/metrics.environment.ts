import { IsOptional } from 'class-validator';
import { IsFlag, IsReadableBy } from '../env.validators';
import { readMetricsToken } from '../end-user-settings';

/** /metrics: served or not, and to whom. */
export class MetricsEnvironment {
  @IsFlag()
  readonly METRICS_ENABLED: boolean = true;

  /** Live mode: /metrics without an admin token. Sandbox mode always serves it openly. */
  @IsFlag()
  readonly METRICS_PUBLIC: boolean = false;

  /**
   * A credential for /metrics alone (Prometheus's `authorization: { credentials_file }`): the token
   * itself (at least 32 characters) or the path of a file holding it. Set, /metrics takes this bearer
   * token and nothing else, and asks the database for nothing; unset, an admin client's token.
   */
  @IsOptional()
  @IsReadableBy(readMetricsToken)
  readonly METRICS_TOKEN?: string = undefined;
}

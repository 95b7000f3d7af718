import { APP_GUARD } from '@nestjs/core';
import type { Server } from 'node:http';
import { DynamicModule, Logger, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { HttpAdapterHost } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { corsOrigins } from '../config/env.schema';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { EndUserEnvironment } from '../config/environment/end-users.environment';
import type { SessionEnvironment } from '../config/environment/sessions.environment';
import type { StaffEnvironment } from '../config/environment/staff.environment';
import { staffPolicySettings, staffProvider } from '../config/staff-settings';
import { StaffPolicy } from './domain/staff';
import type { ServiceEnvironment } from '../config/environment/service.environment';

/** What authentication is configured with: end users' providers and web apps' sessions, and the few service settings they need. */
type AuthEnvironment = EndUserEnvironment &
  SessionEnvironment &
  StaffEnvironment &
  Pick<ServiceEnvironment, 'DATA_DIR' | 'PUBLIC_BASE_URL' | 'CORS_ORIGINS' | 'DEFAULT_TENANT' | 'NODE_ENV'>;
import { loadPreviousSessionKeys, loadPseudonymKey, loadSessionKey, sessionSettings, trustedIssuers } from '../config/end-user-settings';
import { BrowserSessionStore } from './domain/browser-session.ports';
import { BrowserSessions } from './domain/browser-sessions.service';
import { SessionController } from './http/session.controller';
import { MeController } from './http/me.controller';
import { EndUserSessionsController } from './http/end-user-sessions.controller';
import { JoseSealedBox } from './oidc/jose-sealed-box';
import { OpenIdRelyingParty } from './oidc/openid-relying-party';
import { PgBrowserSessionStore } from './persistence/pg-browser-session-store';
import { PostgresNotifications } from '../database/postgres-notifications';
import { ApiClientChanges } from './domain/api-client-changes.port';
import { ApiClientStore } from './domain/api-client-store.port';
import { ApiClientsService } from './domain/api-clients.service';
import { Authenticator } from './domain/authenticator';
import { EndUserIds } from './domain/end-user-ids';
import { AccessTokens } from './domain/access-tokens.port';
import { ProofReplay } from './domain/proof-replay.port';
import { Pseudonyms } from './domain/pseudonyms';
import { SESSION_PATHS } from './domain/session-endpoints';
import { ClientsController } from './http/clients.controller';
import { DpopProofs } from './oidc/dpop-proofs';
import { AccessGuard } from './http/access.guard';
import { JoseAccessTokens } from './oidc/jose-access-tokens';
import { IssuerDirectory } from './oidc/issuer-metadata';
import { ApiClientEntity } from './persistence/api-client.entity';
import { PgProofReplay } from './persistence/pg-proof-replay';
import { RedisProofReplay } from './persistence/redis-proof-replay';
import { SharedCommit } from '../database/shared-commit';
import { PostgresApiClientChanges } from './persistence/postgres-api-client-changes';
import { TypeOrmApiClientRepository } from './persistence/typeorm-api-client.repository';

/** What authentication needs beyond the environment: the development OpenID provider's issuer and web client, in sandbox mode. */
export interface AuthOptions {
  readonly devIssuer?: string;
  readonly devWebClient?: { readonly clientId: string; readonly secret: string };
  /** Sandbox mode: the development staff provider, trusted when STAFF_OIDC_ISSUER is not set. */
  readonly devStaff?: { readonly issuer: string; readonly swaggerClientId: string };
}

@Module({})
export class AuthModule {
  static forRoot(options: AuthOptions = {}): DynamicModule {
    return {
      module: AuthModule,
      // The edge's identify stage asks it who is calling; every route's access rule and the features' controllers use it.
      global: true,
      imports: [TypeOrmModule.forFeature([ApiClientEntity])],
      controllers: [ClientsController, MeController, SessionController, EndUserSessionsController],
      providers: [
        // Every route's access: the caller the identify stage found, held to the route's decorators.
        { provide: APP_GUARD, useClass: AccessGuard },
        ApiClientsService,
        TypeOrmApiClientRepository,
        { provide: ApiClientStore, useExisting: TypeOrmApiClientRepository },
        {
          provide: ApiClientChanges,
          inject: [PostgresNotifications],
          useFactory: (notifications: PostgresNotifications) => new PostgresApiClientChanges(notifications),
        },
        {
          // Redis where one is named for it, PostgreSQL otherwise (the default: durable, and always there).
          provide: ProofReplay,
          inject: [ConfigService, DataSource, SharedCommit],
          useFactory: (config: ConfigService<AuthEnvironment, true>, dataSource: DataSource, shared: SharedCommit) => {
            const redisUrl = config.get('DPOP_REPLAY_REDIS_URL', { infer: true });
            return redisUrl ? RedisProofReplay.connect(redisUrl) : new PgProofReplay(dataSource, shared);
          },
        },
        // One directory of the issuers' discovery documents and keys, for the tokens and the relying party alike.
        { provide: IssuerDirectory, useFactory: () => new IssuerDirectory() },
        {
          provide: AccessTokens,
          inject: [ConfigService, ProofReplay, IssuerDirectory],
          useFactory: (config: ConfigService<AuthEnvironment, true>, replay: ProofReplay, directory: IssuerDirectory) => {
            const issuers = trustedIssuers(configValues(config), options.devIssuer);
            const clockSkewSeconds = config.getOrThrow('OIDC_CLOCK_SKEW_SECONDS', { infer: true });
            const proofs = new DpopProofs(replay, { maxAgeSeconds: config.getOrThrow('DPOP_PROOF_MAX_AGE_SECONDS', { infer: true }), clockSkewSeconds });
            if (issuers.length > 0) {
              new Logger('EndUsers').log(
                { issuers: issuers.map(({ issuer, tenant }) => ({ issuer, tenant })) },
                'End-user access tokens accepted from these issuers',
              );
            }
            const staff = staffProvider(staffValues(config), options.devStaff);
            if (staff) new Logger('Staff').log({ issuer: staff.issuer, audience: staff.audience }, 'Staff access tokens accepted from this issuer');
            return new JoseAccessTokens(
              issuers,
              {
                clockSkewSeconds,
                maxLifetimeSeconds: config.getOrThrow('OIDC_MAX_TOKEN_LIFETIME_SECONDS', { infer: true }),
                requireDpop: config.getOrThrow('OIDC_REQUIRE_DPOP', { infer: true }),
              },
              proofs,
              directory,
              undefined,
              staff,
            );
          },
        },
        {
          provide: StaffPolicy,
          inject: [ConfigService],
          useFactory: (config: ConfigService<AuthEnvironment, true>) => {
            const { mfaRoles, mfaAcrValues, roleMap } = staffPolicySettings(staffValues(config));
            return new StaffPolicy(mfaRoles, mfaAcrValues, roleMap);
          },
        },
        {
          provide: Pseudonyms,
          inject: [ConfigService],
          useFactory: (config: ConfigService<AuthEnvironment, true>) => {
            const { key, generated } = loadPseudonymKey({
              END_USER_PSEUDONYM_KEY: config.get('END_USER_PSEUDONYM_KEY', { infer: true }),
              DATA_DIR: config.getOrThrow('DATA_DIR', { infer: true }),
            });
            if (generated) new Logger('EndUsers').warn('Made the end users’ pseudonym key under DATA_DIR: replicas must share one (END_USER_PSEUDONYM_KEY)');
            return new Pseudonyms(key);
          },
        },
        {
          provide: PgBrowserSessionStore,
          inject: [DataSource, PostgresNotifications, ConfigService],
          useFactory: (dataSource: DataSource, notifications: PostgresNotifications, config: ConfigService<AuthEnvironment, true>) =>
            new PgBrowserSessionStore(dataSource, notifications, config.getOrThrow('SESSION_IDLE_TIMEOUT_SECONDS', { infer: true })),
        },
        { provide: BrowserSessionStore, useExisting: PgBrowserSessionStore },
        {
          provide: BrowserSessions,
          inject: [ConfigService, HttpAdapterHost, BrowserSessionStore, AccessTokens, Pseudonyms, IssuerDirectory],
          useFactory: (
            config: ConfigService<AuthEnvironment, true>,
            host: HttpAdapterHost,
            store: BrowserSessionStore,
            endUsers: AccessTokens,
            pseudonyms: Pseudonyms,
            directory: IssuerDirectory,
          ) => {
            const settings = sessionSettings(
              {
                OIDC_ISSUER: config.get('OIDC_ISSUER', { infer: true }),
                OIDC_CLIENT_ID: config.get('OIDC_CLIENT_ID', { infer: true }),
                OIDC_CLIENT_SECRET: config.get('OIDC_CLIENT_SECRET', { infer: true }),
                OIDC_CLIENT_PRIVATE_KEY: config.get('OIDC_CLIENT_PRIVATE_KEY', { infer: true }),
                PUBLIC_BASE_URL: config.get('PUBLIC_BASE_URL', { infer: true }),
                SESSION_IDLE_TIMEOUT_SECONDS: config.getOrThrow('SESSION_IDLE_TIMEOUT_SECONDS', { infer: true }),
                SESSION_ABSOLUTE_TIMEOUT_SECONDS: config.getOrThrow('SESSION_ABSOLUTE_TIMEOUT_SECONDS', { infer: true }),
              },
              corsOrigins({ CORS_ORIGINS: config.getOrThrow('CORS_ORIGINS', { infer: true }) }),
              options.devIssuer && options.devWebClient ? { issuer: options.devIssuer, ...options.devWebClient } : undefined,
            );
            if (!settings) return new BrowserSessions(undefined, store, endUsers, pseudonyms);
            const { key, generated } = loadSessionKey({
              SESSION_KEY: config.get('SESSION_KEY', { infer: true }),
              DATA_DIR: config.getOrThrow('DATA_DIR', { infer: true }),
            });

            // Without PUBLIC_BASE_URL (sandbox mode): the loopback address and the port this service listens on.
            const publicOrigin = () => settings.publicBaseUrl ?? `http://127.0.0.1:${listeningPort(host)}`;
            const sessions = { issuer: settings.issuer, clientId: settings.clientId };
            const logger = new Logger('Sessions');
            if (!config.get('OIDC_CLIENT_ID', { infer: true })) {
              // Sandbox mode: the development provider's web client, and a key under DATA_DIR, as expected (the provider's own line says it runs).
              logger.debug(sessions, 'Browser sessions for web apps through the development OpenID provider');
            } else if (generated) {
              logger.warn(
                sessions,
                'Browser sessions for web apps through this OpenID provider; their sealing key was made under DATA_DIR: replicas must share one (SESSION_KEY)',
              );
            } else {
              logger.log(sessions, 'Browser sessions for web apps through this OpenID provider');
            }
            return new BrowserSessions(
              {
                settings: {
                  idleTimeoutSeconds: settings.idleTimeoutSeconds,
                  absoluteTimeoutSeconds: settings.absoluteTimeoutSeconds,
                  publicOrigin,
                  publicOriginConfigured: settings.publicBaseUrl !== undefined,
                  allowedOrigins: () => [publicOrigin(), ...settings.allowedOrigins],
                  callbackPath: SESSION_PATHS.callback,
                },
                provider: new OpenIdRelyingParty(settings, config.getOrThrow('OIDC_AUDIENCE', { infer: true }), directory),
                box: new JoseSealedBox(key, loadPreviousSessionKeys(config.get('SESSION_PREVIOUS_KEYS', { infer: true }))),
              },
              store,
              endUsers,
              pseudonyms,
            );
          },
        },
        Authenticator,
        {
          provide: EndUserIds,
          inject: [ConfigService, Pseudonyms],
          useFactory: (config: ConfigService<AuthEnvironment, true>, pseudonyms: Pseudonyms) =>
            new EndUserIds(trustedIssuers(configValues(config), options.devIssuer), pseudonyms),
        },
      ],
      exports: [ApiClientsService, Authenticator, EndUserIds, BrowserSessions, StaffPolicy],
    };
  }
}

function listeningPort(host: HttpAdapterHost): number {
  const server = host.httpAdapter?.getHttpServer() as Server | undefined;
  const address = server?.address();
  return typeof address === 'object' && address ? address.port : 0;
}

function configValues(config: ConfigService<AuthEnvironment, true>) {
  return {
    OIDC_ISSUER: config.get('OIDC_ISSUER', { infer: true }),
    OIDC_AUDIENCE: config.getOrThrow('OIDC_AUDIENCE', { infer: true }),
    OIDC_TENANT: config.getOrThrow('OIDC_TENANT', { infer: true }),
    OIDC_ISSUERS: config.get('OIDC_ISSUERS', { infer: true }),
  };
}

function staffValues(config: ConfigService<AuthEnvironment, true>) {
  return {
    STAFF_OIDC_ISSUER: config.get('STAFF_OIDC_ISSUER', { infer: true }),
    STAFF_OIDC_AUDIENCE: config.getOrThrow('STAFF_OIDC_AUDIENCE', { infer: true }),
    STAFF_OIDC_CLIENT_ID: config.get('STAFF_OIDC_CLIENT_ID', { infer: true }),
    STAFF_ROLES_CLAIM: config.getOrThrow('STAFF_ROLES_CLAIM', { infer: true }),
    STAFF_ID_CLAIM: config.getOrThrow('STAFF_ID_CLAIM', { infer: true }),
    STAFF_ROLE_MAP: config.get('STAFF_ROLE_MAP', { infer: true }),
    STAFF_MFA_ROLES: config.getOrThrow('STAFF_MFA_ROLES', { infer: true }),
    STAFF_MFA_ACR_VALUES: config.get('STAFF_MFA_ACR_VALUES', { infer: true }),
  };
}

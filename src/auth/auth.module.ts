import type { Server } from 'node:http';
import { Global, Logger, Module } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { TypeOrmModule } from '@nestjs/typeorm';
import { staffPolicySettings } from '../config/staff-settings';
import { BackgroundWork } from '../common/domain/background-work';
import { GatewayConfig } from '../config/gateway-config';
import { StaffDocsLogin } from './http/staff-docs-login';
import { StaffPolicy } from './domain/staff';

import { loadPreviousSessionKeys, loadPseudonymKey, loadSessionKey, sessionSettings } from '../config/end-user-settings';
import { BrowserSessionStore } from './domain/browser-session-store.port';
import { BrowserSessions } from './domain/browser-sessions.service';
import { SessionController } from './http/session.controller';
import { MeController } from './http/me.controller';
import { EndUserSessionsController } from './http/end-user-sessions.controller';
import { JoseSealedBox } from '../common/sealing/jose-sealed-box';
import { OpenIdRelyingParty } from './oidc/openid-relying-party';
import { PostgresBrowserSessionRepository } from './persistence/postgres-browser-session.repository';
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
import { JoseAccessTokens } from './oidc/jose-access-tokens';
import { IssuerDirectory } from './oidc/issuer-metadata';
import { ApiClientEntity } from './persistence/api-client.entity';
import { PostgresProofReplayRepository } from './persistence/postgres-proof-replay.repository';
import { RedisProofReplayRepository } from './persistence/redis-proof-replay.repository';
import { SharedCommit } from '../database/shared-commit';
import { PostgresApiClientChangesRepository } from './persistence/postgres-api-client-changes.repository';
import { PostgresApiClientRepository } from './persistence/postgres-api-client.repository';

/**
 * Who is calling, and may they: client tokens, end users' and staff's access tokens, web apps'
 * browser sessions, and every route's access guard. Global: the edge's identify stage asks it who is
 * calling, and the features' controllers use its decorators and services.
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([ApiClientEntity])],
  controllers: [ClientsController, MeController, SessionController, EndUserSessionsController],
  providers: [
    ApiClientsService,
    PostgresApiClientRepository,
    { provide: ApiClientStore, useExisting: PostgresApiClientRepository },
    {
      provide: ApiClientChanges,
      inject: [PostgresNotifications],
      useFactory: (notifications: PostgresNotifications) => new PostgresApiClientChangesRepository(notifications),
    },
    {
      // Redis where one is named for it, PostgreSQL otherwise (the default: durable, and always there).
      provide: ProofReplay,
      inject: [GatewayConfig, DataSource, SharedCommit, BackgroundWork],
      useFactory: ({ settings }: GatewayConfig, dataSource: DataSource, shared: SharedCommit, background: BackgroundWork) => {
        const redisUrl = settings.DPOP_REPLAY_REDIS_URL;
        return redisUrl ? RedisProofReplayRepository.connect(redisUrl) : new PostgresProofReplayRepository(dataSource, shared, background);
      },
    },
    // One directory of the issuers' discovery documents and keys, for the tokens and the relying party alike.
    { provide: IssuerDirectory, useFactory: () => new IssuerDirectory() },
    {
      provide: AccessTokens,
      inject: [GatewayConfig, ProofReplay, IssuerDirectory],
      useFactory: (config: GatewayConfig, replay: ProofReplay, directory: IssuerDirectory) => {
        const { settings, issuers } = config;
        const clockSkewSeconds = settings.OIDC_CLOCK_SKEW_SECONDS;
        const proofs = new DpopProofs(replay, { maxAgeSeconds: settings.DPOP_PROOF_MAX_AGE_SECONDS, clockSkewSeconds });
        if (issuers.length > 0) {
          new Logger('EndUsers').log(
            { issuers: issuers.map(({ issuer, tenant }) => ({ issuer, tenant })) },
            'End-user access tokens accepted from these issuers',
          );
        }
        const staff = config.staffProvider;
        if (staff) new Logger('Staff').log({ issuer: staff.issuer, audience: staff.audience }, 'Staff access tokens accepted from this issuer');
        return new JoseAccessTokens(
          issuers,
          {
            clockSkewSeconds,
            maxLifetimeSeconds: settings.OIDC_MAX_TOKEN_LIFETIME_SECONDS,
            requireDpop: settings.OIDC_REQUIRE_DPOP,
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
      inject: [GatewayConfig],
      useFactory: ({ settings }: GatewayConfig) => {
        const { mfaRoles, mfaAcrValues, roleMap } = staffPolicySettings(settings);
        return new StaffPolicy(mfaRoles, mfaAcrValues, roleMap);
      },
    },
    {
      provide: Pseudonyms,
      inject: [GatewayConfig],
      useFactory: ({ settings }: GatewayConfig) => {
        const { key, generated } = loadPseudonymKey(settings);
        if (generated) new Logger('EndUsers').warn('Made the end users’ pseudonym key under DATA_DIR: replicas must share one (END_USER_PSEUDONYM_KEY)');
        return new Pseudonyms(key);
      },
    },
    {
      provide: PostgresBrowserSessionRepository,
      inject: [DataSource, PostgresNotifications, GatewayConfig, BackgroundWork],
      useFactory: (dataSource: DataSource, notifications: PostgresNotifications, { settings }: GatewayConfig, background: BackgroundWork) =>
        new PostgresBrowserSessionRepository(dataSource, notifications, settings.SESSION_IDLE_TIMEOUT_SECONDS, background),
    },
    { provide: BrowserSessionStore, useExisting: PostgresBrowserSessionRepository },
    {
      provide: BrowserSessions,
      inject: [GatewayConfig, HttpAdapterHost, BrowserSessionStore, AccessTokens, Pseudonyms, IssuerDirectory],
      useFactory: (
        config: GatewayConfig,
        host: HttpAdapterHost,
        store: BrowserSessionStore,
        endUsers: AccessTokens,
        pseudonyms: Pseudonyms,
        directory: IssuerDirectory,
      ) => {
        const development = config.development.identityProvider;
        const settings = sessionSettings(
          config.settings,
          config.corsOrigins,
          development ? { issuer: development.issuer, ...development.webClient } : undefined,
        );
        if (!settings) return new BrowserSessions(undefined, store, endUsers, pseudonyms);
        const { key, generated } = loadSessionKey(config.settings);

        // Without PUBLIC_BASE_URL (sandbox mode): the loopback address and the port this service listens on.
        const publicOrigin = () => settings.publicBaseUrl ?? `http://127.0.0.1:${listeningPort(host)}`;
        const sessions = { issuer: settings.issuer, clientId: settings.clientId };
        const logger = new Logger('Sessions');
        if (!config.settings.OIDC_CLIENT_ID) {
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
            provider: new OpenIdRelyingParty(settings, config.settings.OIDC_AUDIENCE, directory),
            box: new JoseSealedBox(key, loadPreviousSessionKeys(config.settings.SESSION_PREVIOUS_KEYS)),
          },
          store,
          endUsers,
          pseudonyms,
        );
      },
    },
    {
      // Live mode with staff sign-in and Swagger UI's client at the staff provider: /docs opens with the staff's own
      // sign-in (docs/security.md, "Staff"), its cookie sealed with the sessions' key. Otherwise none (null).
      provide: StaffDocsLogin,
      inject: [GatewayConfig, HttpAdapterHost, AccessTokens, StaffPolicy, IssuerDirectory],
      useFactory: (config: GatewayConfig, host: HttpAdapterHost, tokens: AccessTokens, policy: StaffPolicy, directory: IssuerDirectory) => {
        const staff = config.staffProvider;
        if (!config.settings.DOCS_ENABLED || config.access.docs !== 'admin' || !staff?.swaggerClientId) return null;
        const { key } = loadSessionKey(config.settings);
        const publicBaseUrl = config.settings.PUBLIC_BASE_URL;
        const origin = () => (publicBaseUrl ? publicBaseUrl.replace(/\/$/, '') : `http://127.0.0.1:${listeningPort(host) || config.settings.PORT}`);
        const provider = new OpenIdRelyingParty(
          { issuer: staff.issuer, clientId: staff.swaggerClientId, clientAuth: { none: true } },
          // No resource parameter: the provider's default audience for the client (Entra ID's v2 endpoint refuses one).
          undefined,
          directory,
          (offered) => ['openid', ...(offered?.includes('profile') ? ['profile'] : [])],
        );
        return new StaffDocsLogin(
          provider,
          tokens,
          policy,
          new JoseSealedBox(key, loadPreviousSessionKeys(config.settings.SESSION_PREVIOUS_KEYS)),
          origin,
          config.errorDocs,
        );
      },
    },
    Authenticator,
    {
      provide: EndUserIds,
      inject: [GatewayConfig, Pseudonyms],
      useFactory: (config: GatewayConfig, pseudonyms: Pseudonyms) => new EndUserIds(config.issuers, pseudonyms),
    },
  ],
  exports: [ApiClientsService, Authenticator, EndUserIds, BrowserSessions, StaffPolicy, StaffDocsLogin],
})
export class AuthModule {}

function listeningPort(host: HttpAdapterHost): number {
  const server = host.httpAdapter?.getHttpServer() as Server | undefined;
  const address = server?.address();
  return typeof address === 'object' && address ? address.port : 0;
}

import { randomBytes } from 'node:crypto';
import { TEST_AUDIENCE } from './oidc';

/** Anything shaped like a JWS or JWE in compact form: what must never reach a web app's page. */
export const JWT_LIKE = /eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\./;

/**
 * A gateway that is the development OpenID provider's web client (`partner-web`, by its secret
 * unless `extra` says otherwise), with keys of its own: replicas given the same object share them.
 */
export function webClientEnv(issuer: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    OIDC_ISSUER: issuer,
    OIDC_AUDIENCE: TEST_AUDIENCE,
    OIDC_CLIENT_ID: 'partner-web',
    OIDC_CLIENT_SECRET: 'partner-web-secret',
    SESSION_KEY: randomBytes(32).toString('base64'),
    END_USER_PSEUDONYM_KEY: randomBytes(32).toString('base64'),
    ...extra,
  };
}

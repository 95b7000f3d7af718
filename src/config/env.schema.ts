import type { AuditEnvironment } from './environment/audit.environment';
import type { EndUserEnvironment } from './environment/end-users.environment';
import type { UpstreamEnvironment } from './environment/upstream.environment';
import type { MetricsEnvironment } from './environment/metrics.environment';
import type { ServiceEnvironment } from './environment/service.environment';
import { liveMode } from './environment/raw-environment';

// What is decided across features' settings: who may read /docs and /metrics, and what production
// refuses to start without. Each feature's own variables are its class under environment/, which
// .env.example and docs/operations.md's table mirror (tests keep them in step).

/** The allowed CORS origins, parsed. */
export function corsOrigins(config: Pick<ServiceEnvironment, 'CORS_ORIGINS'>): string[] {
  return config.CORS_ORIGINS.split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '');
}

/** Whether /docs and /metrics need an admin token (or, for /metrics, METRICS_TOKEN): only in live mode, unless opened by config. */
export function operationalAccess(config: Pick<ServiceEnvironment, 'DOCS_PUBLIC'> & MetricsEnvironment & { readonly UPSTREAM_BASE_URL?: string }): {
  docs: 'open' | 'admin';
  metrics: 'open' | 'admin' | 'token';
} {
  const live = liveMode(config);
  return {
    docs: !live || config.DOCS_PUBLIC ? 'open' : 'admin',
    metrics: !live || config.METRICS_PUBLIC ? 'open' : config.METRICS_TOKEN ? 'token' : 'admin',
  };
}

/** https, or http to a loopback address (a sidecar on the same host, where nothing crosses a network). */
function isSecureUpstream(url: string): boolean {
  const parsed = URL.parse(url);
  if (parsed === null) return false;
  if (parsed.protocol === 'https:') return true;
  return parsed.protocol === 'http:' && (parsed.hostname === 'localhost' || parsed.hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(parsed.hostname));
}

/**
 * What production (NODE_ENV=production) refuses to start without, each named: a provider (sandbox
 * mode makes up the provider's answers, opens /docs and /metrics, and writes its calls into the
 * audit log), and every key the replicas must share — a key made under a pod's own DATA_DIR would
 * differ from pod to pod (pseudonyms, sessions and the audit chain with it). The service's entry
 * points check it; the stand-alone sandbox, a provider's stand-in, does not.
 */
export function productionProblems(
  config: Pick<ServiceEnvironment, 'NODE_ENV'> &
    Pick<ServiceEnvironment, 'PUBLIC_BASE_URL' | 'DATA_KEY' | 'WEBHOOK_LOCAL_URLS'> &
    Pick<UpstreamEnvironment, 'UPSTREAM_BASE_URL'> &
    Pick<AuditEnvironment, 'AUDIT_SIGNING_KEY'> &
    Pick<EndUserEnvironment, 'END_USER_PSEUDONYM_KEY' | 'OIDC_ISSUER' | 'OIDC_ISSUERS'>,
): string[] {
  if (config.NODE_ENV !== 'production') return [];
  const problems: string[] = [];
  if (!liveMode(config)) {
    problems.push(
      'UPSTREAM_BASE_URL: required in production (NODE_ENV=production): without it the service runs in sandbox mode, ' +
        'with made-up provider answers, open /docs and /metrics, and sandbox calls in the audit log',
    );
  } else if (!isSecureUpstream(config.UPSTREAM_BASE_URL!)) {
    problems.push(
      'UPSTREAM_BASE_URL: must be https in production: the provider’s bearer token and its signed requests would cross the network in clear ' +
        '(http is accepted only for a loopback address: a sidecar on the same host)',
    );
  }
  if ((config.OIDC_ISSUER !== undefined || config.OIDC_ISSUERS !== undefined) && config.PUBLIC_BASE_URL === undefined) {
    problems.push(
      'PUBLIC_BASE_URL: required in production when end users are accepted (OIDC_ISSUER or OIDC_ISSUERS): their DPoP proofs name the URL ' +
        'they call, which is checked against this origin, never one a forwarded header could choose',
    );
  }
  if (config.AUDIT_SIGNING_KEY === undefined) {
    problems.push(
      "AUDIT_SIGNING_KEY: required in production: the Ed25519 key (PEM, or a file's path) every replica signs audit checkpoints with; " +
        "one made under each pod's DATA_DIR would differ between pods, and their sealers would stop each other",
    );
  }
  if (config.END_USER_PSEUDONYM_KEY === undefined) {
    problems.push(
      "END_USER_PSEUDONYM_KEY: required in production: 32 random bytes (openssl rand -base64 32), or a file's path, " +
        "shared by every replica; one made under each pod's DATA_DIR would give an end user other pseudonyms on other pods",
    );
  }
  if (config.DATA_KEY === undefined) {
    problems.push(
      "DATA_KEY: required in production: 32 random bytes (openssl rand -base64 32), or a file's path, shared by every replica; " +
        "bank accounts' identifiers and the answers kept to replay are sealed with it, and one made under each pod's DATA_DIR would open on that pod only",
    );
  }
  if (config.WEBHOOK_LOCAL_URLS === true) {
    problems.push(
      'WEBHOOK_LOCAL_URLS: not in production: webhook endpoints must be https and reach public addresses only, ' +
        'or a partner could have the service call into its own network (SSRF)',
    );
  }
  return problems;
}

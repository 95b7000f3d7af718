import type { UpstreamEnvironment } from '../config/environment/upstream.environment';
import { readUpstreamPublicKey, UpstreamPublicKey } from '../config/upstream-public-key';

/** Everything the provider's client and adapters need, resolved once at start-up (also their injection token). */
export abstract class UpstreamSettings {
  abstract readonly baseUrl: string;
  abstract readonly bearerToken: string;
  abstract readonly authScheme: string;
  abstract readonly publicKey: UpstreamPublicKey;
  abstract readonly bankAccountPath: string;
  abstract readonly encryption: 'jwe' | 'none';
  abstract readonly connectTimeoutMs: number;
  abstract readonly timeoutMs: number;
  abstract readonly retryMax: number;
  abstract readonly breakerThreshold: number;
  abstract readonly breakerHalfOpenMs: number;
}

function tuning(config: UpstreamEnvironment) {
  return {
    authScheme: config.UPSTREAM_AUTH_SCHEME,
    bankAccountPath: config.UPSTREAM_BANK_ACCOUNT_PATH,
    encryption: config.UPSTREAM_ENCRYPTION,
    connectTimeoutMs: config.UPSTREAM_CONNECT_TIMEOUT_MS,
    timeoutMs: config.UPSTREAM_TIMEOUT_MS,
    retryMax: config.UPSTREAM_RETRY_MAX,
    breakerThreshold: config.UPSTREAM_BREAKER_THRESHOLD,
    breakerHalfOpenMs: config.UPSTREAM_BREAKER_HALF_OPEN_MS,
  };
}

/** Live mode: the provider named by UPSTREAM_* (validated already, so these are present). */
export function liveUpstreamSettings(config: UpstreamEnvironment): UpstreamSettings {
  if (!config.UPSTREAM_BASE_URL || !config.UPSTREAM_BEARER_TOKEN || !config.UPSTREAM_PUBLIC_KEY) {
    throw new Error('live mode needs UPSTREAM_BASE_URL, UPSTREAM_BEARER_TOKEN and UPSTREAM_PUBLIC_KEY');
  }
  return {
    ...tuning(config),
    baseUrl: config.UPSTREAM_BASE_URL.replace(/\/+$/, ''),
    bearerToken: config.UPSTREAM_BEARER_TOKEN,
    publicKey: readUpstreamPublicKey(config.UPSTREAM_PUBLIC_KEY),
  };
}

/** Sandbox mode: the same adapter, pointed at a sandbox with the sandbox's key and token. */
export function sandboxUpstreamSettings(
  config: UpstreamEnvironment,
  sandbox: { baseUrl: string; bearerToken: string; publicKeyPem: string },
): UpstreamSettings {
  return {
    ...tuning(config),
    authScheme: 'Bearer',
    baseUrl: sandbox.baseUrl,
    bearerToken: sandbox.bearerToken,
    publicKey: readUpstreamPublicKey(sandbox.publicKeyPem),
  };
}

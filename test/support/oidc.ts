import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, Server } from 'node:http';
import { calculateJwkThumbprint, CryptoKey, exportJWK, generateKeyPair, JWK, JWTPayload, SignJWT } from 'jose';

export const TEST_AUDIENCE = 'urn:partner-gateway';

/** A signing key of a test issuer: its private half and its public JWK (with kid). */
export interface IssuerKey {
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
}

export async function newIssuerKey(kid: string = randomUUID()): Promise<IssuerKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

/** What a test issuer answers for its JWKS. */
export type IssuerAnswer = 'keys' | 'unavailable' | 'garbage' | 'hang';

/**
 * A hand-made OpenID provider for the refusals: a real HTTP server on loopback with a discovery
 * document and a JWKS, whose keys a test rotates, and which counts how often each is fetched.
 * Tokens are signed here with whatever the test asks for, hostile ones included.
 */
export class TestIssuer {
  keys: IssuerKey[] = [];
  jwksFetches = 0;
  discoveryFetches = 0;
  /** How the discovery document is answered: as it should be, or 503. */
  discoveryAnswer: 'document' | 'unavailable' = 'document';
  /** How the JWKS is answered: the keys, 503, a body that is not JSON, or never (the request hangs). */
  jwksAnswer: IssuerAnswer = 'keys';
  private constructor(
    private readonly server: Server,
    readonly issuer: string,
  ) {}

  static async start(): Promise<TestIssuer> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const address = server.address();
    const issuer = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const test = new TestIssuer(server, issuer);
    test.keys = [await newIssuerKey()];
    server.on('request', (request, response) => {
      if (request.url === '/.well-known/openid-configuration') {
        test.discoveryFetches += 1;
        if (test.discoveryAnswer === 'unavailable') return void response.writeHead(503).end();
        response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks`, id_token_signing_alg_values_supported: ['ES256', 'RS256', 'HS256', 'none'] }));
      } else if (request.url === '/jwks') {
        test.jwksFetches += 1;
        if (test.jwksAnswer === 'unavailable') return void response.writeHead(503, { 'content-type': 'text/plain' }).end('Service Unavailable');
        if (test.jwksAnswer === 'garbage') return void response.writeHead(200, { 'content-type': 'application/json' }).end('<html>maintenance</html>');
        if (test.jwksAnswer === 'hang') return;
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: test.keys.map((key) => key.publicJwk) }));
      } else {
        response.writeHead(404).end();
      }
    });
    return test;
  }

  /** A token as the issuer would make it (RFC 9068), with `claims` and `header` changed as the test says. */
  async token(
    claims: JWTPayload = {},
    options: { key?: IssuerKey; header?: Record<string, unknown>; lifetimeSeconds?: number; now?: number } = {},
  ): Promise<string> {
    const key = options.key ?? this.keys[0];
    const now = options.now ?? Math.floor(Date.now() / 1000);
    return new SignJWT({
      iss: this.issuer,
      aud: TEST_AUDIENCE,
      sub: 'user-1',
      scope: 'customers:write balances:read bank_accounts:write',
      iat: now,
      exp: now + (options.lifetimeSeconds ?? 300),
      jti: randomUUID(),
      client_id: 'app',
      ...claims,
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: key.publicJwk.kid, ...options.header })
      .sign(key.privateKey);
  }

  /** A logout token as the issuer would post it (OpenID Connect Back-Channel Logout 1.0), for `audience`, with `claims` changed. */
  async logoutToken(audience: string, claims: JWTPayload = {}): Promise<string> {
    const key = this.keys[0];
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({
      iss: this.issuer,
      aud: audience,
      sub: 'user-1',
      iat: now,
      exp: now + 120,
      jti: randomUUID(),
      events: { 'http://schemas.openid.net/event/backchannel-logout': {} },
      ...claims,
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'logout+jwt', kid: key.publicJwk.kid })
      .sign(key.privateKey);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }
}

/** An app's DPoP key (RFC 9449): its private half, its public JWK and thumbprint (the token's cnf.jkt). */
export interface DpopKey {
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
  readonly jkt: string;
}

export async function newDpopKey(): Promise<DpopKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  return { privateKey, publicJwk, jkt: await calculateJwkThumbprint(publicJwk, 'sha256') };
}

/** A DPoP proof for one request, with any of its parts changed as the test says. */
export async function dpopProof(
  key: DpopKey,
  request: { method: string; url: string; accessToken?: string },
  changes: { claims?: JWTPayload; header?: Record<string, unknown>; signWith?: CryptoKey } = {},
): Promise<string> {
  return new SignJWT({
    htm: request.method,
    htu: request.url,
    iat: Math.floor(Date.now() / 1000),
    jti: randomUUID(),
    ...(request.accessToken ? { ath: createHash('sha256').update(request.accessToken).digest('base64url') } : {}),
    ...changes.claims,
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.publicJwk, ...changes.header })
    .sign(changes.signWith ?? key.privateKey);
}

/**
 * A DPoP proof that is not signed at all: `header` as given (someone else's public key in it, an
 * algorithm of the forger's choosing) over real claims, and a signature of random bytes.
 */
export function unsignedDpopProof(header: Record<string, unknown>, request: { method: string; url: string; accessToken: string }): string {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const claims = {
    htm: request.method,
    htu: request.url,
    iat: Math.floor(Date.now() / 1000),
    jti: randomUUID(),
    ath: createHash('sha256').update(request.accessToken).digest('base64url'),
  };
  return `${encode(header)}.${encode(claims)}.${randomBytes(64).toString('base64url')}`;
}

import { createHash, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, JWK, SignJWT } from 'jose';

/** A DPoP key (RFC 9449) as `users token --dpop` prints it and `users proof` reads it: a private JWK (ES256). */
export type DpopPrivateJwk = JWK & { readonly kty: 'EC'; readonly crv: 'P-256'; readonly d: string };

/** A new ES256 key for DPoP proofs, as a private JWK: what a development user keeps beside the token bound to it. */
export async function newDpopKey(): Promise<DpopPrivateJwk> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  return { ...(await exportJWK(privateKey)), alg: 'ES256' } as DpopPrivateJwk;
}

/**
 * A DPoP proof (RFC 9449 section 4.2) for one request, signed with `key`: `htm`, `htu`, `iat`, a
 * fresh `jti`, and `ath` (the access token's hash) when the request carries a token.
 */
export async function dpopProofWith(key: DpopPrivateJwk, request: { method: string; url: string; accessToken?: string }): Promise<string> {
  const signing = await importJWK(key, 'ES256');
  return new SignJWT({
    htm: request.method,
    htu: request.url,
    iat: Math.floor(Date.now() / 1000),
    jti: randomUUID(),
    ...(request.accessToken ? { ath: createHash('sha256').update(request.accessToken).digest('base64url') } : {}),
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: { kty: key.kty, crv: key.crv, x: key.x, y: key.y } })
    .sign(signing);
}

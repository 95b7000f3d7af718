/**
 * Remembers which DPoP proofs have been used, across every replica (RFC 9449 section 11.1): a proof
 * is accepted once during the window its `iat` allows, and refused as a replay after that.
 */
export abstract class ProofReplay {
  /**
   * Records `key` until `expiresAt`. Resolves true when it was not recorded before (the proof's
   * first use), false when it was (a replay).
   * @throws DatabaseUnavailable when it cannot tell: the request fails closed.
   */
  abstract useOnce(key: string, expiresAt: Date): Promise<boolean>;
}

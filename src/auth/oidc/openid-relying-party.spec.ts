import { InMemoryProofReplay } from '../../../test/support/fakes';
import { nestLogsOfEachTest } from '../../../test/support/nest-logs';
import { TEST_AUDIENCE, TestIssuer } from '../../../test/support/oidc';
import { DpopProofs } from './dpop-proofs';
import { IssuerDirectory } from './issuer-metadata';
import { JoseAccessTokens } from './jose-access-tokens';
import { OpenIdRelyingParty } from './openid-relying-party';

const CLIENT_ID = 'partner-web';

describe(OpenIdRelyingParty.name, () => {
  let issuer: TestIssuer;
  const logs = nestLogsOfEachTest();
  /** What an operator reads when the provider fails: the warning, naming the provider. */
  const warned = () =>
    logs.lines.filter((line) => line.level === 'warn' && line.context === 'Issuers' && line.fields?.issuer === issuer.issuer).map((line) => line.message);

  const relyingParty = (directory = new IssuerDirectory({ fetchTimeoutMs: 300 })) =>
    new OpenIdRelyingParty({ issuer: issuer.issuer, clientId: CLIENT_ID, clientAuth: { secret: 'a-client-secret' } }, TEST_AUDIENCE, directory);

  beforeEach(async () => {
    issuer = await TestIssuer.start();
  });

  afterEach(() => issuer.close());

  describe('readLogoutToken', () => {
    it('when the logout token is the provider’s, for this client, with the logout event, then it names the subject and the token’s jti', async () => {
      const token = await issuer.logoutToken(CLIENT_ID, { sub: 'ada', jti: 'logout-1' });

      const notice = await relyingParty().readLogoutToken(token);

      expect(notice).toMatchObject({ subject: 'ada', jti: 'logout-1' });
    });

    it('finding 7: when the provider’s discovery document answers 503, then the logout token is refused (400 SESSION.INVALID_LOGOUT_TOKEN), telling the provider the logout failed', async () => {
      issuer.discoveryAnswer = 'unavailable';

      await expect(relyingParty().readLogoutToken(await issuer.logoutToken(CLIENT_ID))).rejects.toMatchObject({ code: 'SESSION.INVALID_LOGOUT_TOKEN' });
      expect(warned()).toContain('The OpenID provider’s discovery failed');
    });

    it.each([
      ['answers 503', 'unavailable'],
      ['answers what is not JSON', 'garbage'],
    ] as const)('finding 7: when the provider’s JWKS %s, then the logout token is refused (400 SESSION.INVALID_LOGOUT_TOKEN)', async (_, answer) => {
      issuer.jwksAnswer = answer;

      await expect(relyingParty().readLogoutToken(await issuer.logoutToken(CLIENT_ID))).rejects.toMatchObject({ code: 'SESSION.INVALID_LOGOUT_TOKEN' });
      expect(warned()).toContain('The OpenID provider’s keys (JWKS) could not be read');
    });

    it('finding 7: when the provider’s JWKS does not answer in time, then the provider is unavailable (503), so it may send the logout again', async () => {
      issuer.jwksAnswer = 'hang';

      await expect(relyingParty().readLogoutToken(await issuer.logoutToken(CLIENT_ID))).rejects.toMatchObject({ code: 'AUTH.ISSUER_UNAVAILABLE' });
      expect(warned()).toContain('The OpenID provider’s keys (JWKS) could not be read');
    });

    it('when the logout token is for another client, then it is refused (400)', async () => {
      await expect(relyingParty().readLogoutToken(await issuer.logoutToken('another-client'))).rejects.toMatchObject({
        code: 'SESSION.INVALID_LOGOUT_TOKEN',
      });
    });
  });

  it('when the relying party and the access-token verifier share a directory, then the provider’s discovery document and JWKS are each fetched once', async () => {
    const directory = new IssuerDirectory();
    const verifier = new JoseAccessTokens(
      [{ issuer: issuer.issuer, audience: TEST_AUDIENCE, tenant: 'acme' }],
      { clockSkewSeconds: 30, maxLifetimeSeconds: 3600, requireDpop: false },
      new DpopProofs(new InMemoryProofReplay(), { maxAgeSeconds: 60, clockSkewSeconds: 30 }),
      directory,
    );

    await verifier.verify(await issuer.token(), { scheme: 'bearer', proof: undefined, method: 'GET', url: 'http://127.0.0.1/api/v1/me' });
    await relyingParty(directory).readLogoutToken(await issuer.logoutToken(CLIENT_ID));

    expect([issuer.discoveryFetches, issuer.jwksFetches]).toEqual([1, 1]);
  });
});

import { canonicalTarget, isUnder, MAX_PATH_LENGTH } from './canonical-target';

describe(canonicalTarget.name, () => {
  it.each([
    ['/api/v1/me', '/api/v1/me', ''],
    ['/api/v1/me?limit=5', '/api/v1/me', 'limit=5'],
    ['/%61pi/v1/me', '/api/v1/me', ''],
    ['/api/v%31/me', '/api/v1/me', ''],
    ['/API/v1/me', '/API/v1/me', ''],
    ['/api/v1/me/', '/api/v1/me/', ''],
    ['http://evil.example/api/v1/me?x=1', '/api/v1/me', 'x=1'],
    ['HTTPS://evil.example:8443/metrics', '/metrics', ''],
    ['http://evil.example', '/', ''],
    ['/docs%2Djson', '/docs-json', ''],
    ['/api/v1/customers/caf%C3%A9/balance', '/api/v1/customers/café/balance', ''],
  ])('when the target is %s, then it is read as %s with query %j and not refused', (raw, path, query) => {
    const sut = canonicalTarget(raw);

    expect(sut.path).toBe(path);
    expect(sut.query).toBe(query);
    expect(sut.refusal).toBeUndefined();
  });

  it('when a plain target is read, then the router gets it unchanged (no copy)', () => {
    const raw = '/api/v1/customers/5b1f2d7c-3e0a-4f4e-8d61-0a9c3b7e2f44/balance?x=1';

    expect(canonicalTarget(raw).url).toBe(raw);
  });

  it('when a target is percent-encoded, then the router gets the path encoded once, in its plainest form', () => {
    expect(canonicalTarget('/%61pi/v1/customers/caf%c3%a9/balance?q=%61').url).toBe('/api/v1/customers/caf%C3%A9/balance?q=%61');
  });

  it.each([
    ['//api/v1/me', '/api/v1/me'],
    ['/api//v1/me', '/api/v1/me'],
    ['/api/v1/./me', '/api/v1/me'],
    ['/api/v1/x/../me', '/api/v1/me'],
    ['/api/v1/%2e%2e/v1/me', '/api/v1/me'],
    ['/api/v1/me/.', '/api/v1/me'],
  ])('when the target %s has empty or dot segments, then it is refused as non-canonical and read as %s', (raw, path) => {
    const sut = canonicalTarget(raw);

    expect(sut.refusal).toMatchObject({ status: 400, code: 'REQUEST.NON_CANONICAL_PATH' });
    expect(sut.path).toBe(path);
  });

  it.each([
    '/api/v1/%ZZ',
    '/api/v1/%',
    '/api/v1/%C3',
    '/api/v1/a%2Fb',
    '/api/v1/a%5Cb',
    '/api/v1/a%00b',
    '/api/v1/a%0Ab',
    '/api/v1/a b',
    '/api/v1/a#b',
    '*',
    'example.com:443',
  ])('when the target is %j, then it is refused as a bad path', (raw) => {
    expect(canonicalTarget(raw).refusal).toMatchObject({ status: 400, code: 'REQUEST.BAD_PATH' });
  });

  it('when a bad segment is under /api/v1, then the reading still is (so the refusal is audited there)', () => {
    expect(isUnder('/api/v1', canonicalTarget('/api/v1/%ZZ').path)).toBe(true);
  });

  it('when the path is longer than the limit, then it is refused with 414 and still read', () => {
    const long = `/api/v1/customers/${'a'.repeat(MAX_PATH_LENGTH)}/balance`;
    const sut = canonicalTarget(long);

    expect(sut.refusal).toMatchObject({ status: 414, code: 'REQUEST.URI_TOO_LONG' });
    expect(sut.path).toBe(long);
  });
});

describe(isUnder.name, () => {
  it.each([
    ['/api/v1', true],
    ['/api/v1/me', true],
    ['/API/V1/me', true],
    ['/api/v10', false],
    ['/api/v1x/me', false],
    ['/api', false],
  ])('when the path is %s, then it is under /api/v1: %s', (path, expected) => {
    expect(isUnder('/api/v1', path)).toBe(expected);
  });
});

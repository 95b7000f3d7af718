import { bearerToken } from './bearer-auth.guard';

describe('bearerToken', () => {
  it.each([
    ['Bearer abc', 'abc'],
    ['bearer abc', 'abc'],
    ['BEARER   abc  ', 'abc'],
  ])('when the header is %j, then the token is %j', (header, token) => {
    expect(bearerToken(header)).toBe(token);
  });

  it.each([[undefined], [''], ['Bearer'], ['Bearer '], ['Basic abc'], ['Bearer a b'], ['Token abc'], [['Bearer a', 'Bearer b']]])(
    'when the header is %j, then there is no token',
    (header) => {
      expect(bearerToken(header as never)).toBeUndefined();
    },
  );
});

import { presentedToken } from './presented-credentials';

describe(presentedToken.name, () => {
  it.each([
    ['Bearer abc', { scheme: 'bearer', token: 'abc' }],
    ['bearer abc', { scheme: 'bearer', token: 'abc' }],
    ['BEARER   abc  ', { scheme: 'bearer', token: 'abc' }],
    ['DPoP a.b.c', { scheme: 'dpop', token: 'a.b.c' }],
    ['dpop a.b.c', { scheme: 'dpop', token: 'a.b.c' }],
  ])('when the header is %j, then it presents %j', (header, presented) => {
    expect(presentedToken(header)).toEqual(presented);
  });

  it.each([[undefined], [''], ['Bearer'], ['Bearer '], ['Basic abc'], ['Bearer a b'], ['Token abc'], [['Bearer a', 'Bearer b']]])(
    'when the header is %j, then there is no token',
    (header) => {
      expect(presentedToken(header as never)).toBeUndefined();
    },
  );
});

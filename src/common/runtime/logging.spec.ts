import { loggedUrl } from './logging';

describe(loggedUrl.name, () => {
  it('when there is no query, then the path is logged as it is', () => {
    expect(loggedUrl({ path: '/api/v1/me', query: '' })).toBe('/api/v1/me');
  });

  it('when the query carries values, then no value is logged, and only the API’s own parameter names', () => {
    const sut = loggedUrl({ path: '/api/v1/nope', query: 'phone=%2B4915123456789&dob=1990-01-01&token=pgw_secret&limit=5' });

    expect(sut).toBe('/api/v1/nope?[REDACTED]&[REDACTED]&[REDACTED]&limit=[REDACTED]');
    expect(sut).not.toMatch(/4915123456789|1990|pgw_|=5/);
  });

  it('when the path is very long, then it is cut', () => {
    expect(loggedUrl({ path: `/${'a'.repeat(5000)}`, query: '' }).length).toBeLessThan(1100);
  });
});

import { createServer, get, IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import helmet from 'helmet';
import { securityHeaders } from './security-headers';

const OPTIONS = { contentSecurityPolicy: { useDefaults: true, directives: { 'upgrade-insecure-requests': null } } };

/** The headers helmet itself sets on a real response, as a client receives them. */
async function helmetOnARealResponse(): Promise<IncomingHttpHeaders> {
  const middleware = helmet(OPTIONS);
  const server = createServer((request, response) => middleware(request, response, () => response.end()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise((resolve, reject) => get({ host: '127.0.0.1', port, path: '/' }, (answer) => resolve(answer.headers)).on('error', reject));
  } finally {
    server.close();
  }
}

describe('securityHeaders', () => {
  it('when worked out once, then they are exactly the headers helmet sets on a live response', async () => {
    const live = await helmetOnARealResponse();
    const fromHelmet = Object.fromEntries(
      Object.entries(live).filter(([name]) => !['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'].includes(name)),
    );

    expect(securityHeaders(OPTIONS)).toEqual(fromHelmet);
    expect(securityHeaders(OPTIONS)['content-security-policy']).not.toContain('upgrade-insecure-requests');
  });
});

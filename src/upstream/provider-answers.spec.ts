import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { problemOf } from '../common/http/error-envelope.filter';
import { UpstreamError } from '../common/domain/upstream';
import { PROVIDER_ANSWERS, ProviderAnswerName, providerErrors } from './provider-answers';

/** Each row's error as its named constructor builds it, for a GET and for a POST. */
const built: Record<ProviderAnswerName, (method: 'GET' | 'POST') => UpstreamError> = {
  badResponse: (m) => providerErrors.badResponse(m, { status: 200 }),
  incompleteResponse: (m) => providerErrors.incompleteResponse(m, { status: 200 }, 'id'),
  credentialsRefused: () => providerErrors.credentialsRefused({ status: 401 }),
  notFound: () => providerErrors.notFound({ status: 404 }),
  conflict: () => providerErrors.conflict({ status: 409 }),
  rateLimited: () => providerErrors.rateLimited({ status: 429 }, 2),
  rejected: () => providerErrors.rejected({ status: 400 }),
  serverError: (m) => providerErrors.serverError(m, { status: 500 }),
  timeout: (m) => providerErrors.timeout(m, {}, 1000),
  unreachable: () => providerErrors.unreachable({}),
  connectionLost: (m) => providerErrors.connectionLost(m, {}),
  circuitOpen: () => providerErrors.circuitOpen({}, 3),
};

/** The table "How provider answers reach the partner" in docs/decisions.md, row by row. */
function documentedRows(): { provider: string; partner: string; code: string; outcome: string }[] {
  const text = readFileSync(join(process.cwd(), 'docs', 'decisions.md'), 'utf8');
  const start = text.indexOf('| Provider | Partner | Code | Outcome |');
  const lines = text.slice(start).split('\n').slice(2);
  const rows = lines.slice(
    0,
    lines.findIndex((line) => !line.trim().startsWith('|')),
  );
  return rows.map((line) => {
    const [provider, partner, code, outcome] = line
      .trim()
      .slice(1, -1)
      .split('|')
      .map((cell) => cell.trim());
    return { provider, partner, code: /`([A-Z_.]+)`/.exec(code)?.[1] ?? code, outcome };
  });
}

describe('Provider answers (src/upstream/provider-answers.ts and docs/decisions.md)', () => {
  it('when the docs table and the code are read, then they list the same answers, row for row', () => {
    const fromCode = (Object.keys(PROVIDER_ANSWERS) as ProviderAnswerName[]).map((name) => {
      const get = built[name]('GET');
      const post = built[name]('POST');
      const { status } = problemOf(get);
      const outcome = get.outcome === post.outcome ? get.outcome : `${post.outcome} (POST) / ${get.outcome} (GET)`;
      return {
        provider: PROVIDER_ANSWERS[name].provider,
        partner: get.retryAfterSeconds === undefined ? String(status) : `${status} + Retry-After`,
        code: get.code,
        outcome,
      };
    });

    expect(documentedRows()).toEqual(fromCode);
  });

  it('when a POST times out, then its outcome is unknown and the partner is told to retry with the same reference', () => {
    const error = providerErrors.timeout('POST', { latencyMs: 10_000 }, 10_000);

    expect(error).toMatchObject({ code: 'UPSTREAM.TIMEOUT', outcome: 'unknown', upstream: { latencyMs: 10_000 } });
    expect(error.details).toMatch(/retry with the same reference/);
  });
});

import { BadRequestException, HttpException, NotFoundException, ServiceUnavailableException } from '@nestjs/common';
import { DomainError } from '../domain/domain-error';
import { problemOf } from './error-envelope.filter';

describe('problemOf', () => {
  it.each([
    ['invalid_input', 400],
    ['unauthenticated', 401],
    ['forbidden', 403],
    ['not_found', 404],
    ['conflict', 409],
    ['payload_too_large', 413],
    ['unsupported_media_type', 415],
    ['unprocessable', 422],
    ['rate_limited', 429],
    ['upstream_rejected', 502],
    ['unavailable', 503],
    ['upstream_timeout', 504],
  ] as const)('when a domain error is %s, then the status is %i', (kind, status) => {
    expect(problemOf(new DomainError('X.Y', kind, 'message')).status).toBe(status);
  });

  it('when a domain error carries details, fields and a retry hint, then they are kept', () => {
    const problem = problemOf(
      new DomainError('UPSTREAM.CIRCUIT_OPEN', 'unavailable', 'The provider is unavailable', {
        details: 'Try again shortly',
        retryAfterSeconds: 30,
        fields: [{ field: 'a', message: 'b' }],
      }),
    );

    expect(problem).toMatchObject({ status: 503, code: 'UPSTREAM.CIRCUIT_OPEN', details: 'Try again shortly', retryAfterSeconds: 30 });
    expect(problem.fields).toEqual([{ field: 'a', message: 'b' }]);
  });

  it('when an unknown error is thrown, then 500 with a generic message and nothing of the original', () => {
    const problem = problemOf(new Error('relation "secret_table" does not exist at SELECT password FROM x'));

    expect(problem.status).toBe(500);
    expect(problem.message).not.toContain('secret_table');
    expect(problem.details).not.toContain('password');
  });

  it('when the router raises 404, then its message, which names the raw URL and its query, is not echoed', () => {
    const problem = problemOf(new NotFoundException('Cannot GET /api/v1/x?phone=4915123456789&token=pgw_secret'));

    expect(problem).toMatchObject({ status: 404, code: 'ROUTE.NOT_FOUND', message: 'No such route' });
    expect(JSON.stringify(problem)).not.toMatch(/phone|pgw_|\/api/);
  });

  it('when Nest raises another 4xx, then its status is kept and its message is not echoed', () => {
    expect(problemOf(new BadRequestException('Unexpected token in {"document_number":"C01X00T47"'))).toEqual({
      status: 400,
      code: 'HTTP.400',
      message: 'Bad Request',
      details: 'Bad Request',
    });
  });

  it('when a health check fails, then 503 names the failing checks only', () => {
    const problem = problemOf(
      new ServiceUnavailableException({ status: 'error', error: { database: { status: 'down', message: 'ECONNREFUSED 10.0.0.1' } } }),
    );

    expect(problem).toMatchObject({ status: 503, details: 'Failing checks: database' });
    expect(JSON.stringify(problem)).not.toContain('10.0.0.1');
  });

  it('when Fastify refuses a body as too large, then 413 with a clear message', () => {
    const error = Object.assign(new Error('Request body is too large'), { code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 });

    expect(problemOf(error)).toMatchObject({ status: 413, code: 'REQUEST.BODY_TOO_LARGE' });
  });

  it('when the Fastify adapter wraps a Fastify error in an HttpException, then the Fastify code decides the message', () => {
    const cause = Object.assign(new Error('Request body is too large'), { name: 'FastifyError', code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 });
    const problem = problemOf(new HttpException('Request body is too large', 413, { cause }));

    expect(problem).toMatchObject({ status: 413, code: 'REQUEST.BODY_TOO_LARGE', message: 'The request body is larger than the service accepts' });
  });
});

import { BadRequestException, HttpException, NotFoundException, ServiceUnavailableException } from '@nestjs/common';
import { DomainError } from '../domain/domain-error';
import { errorEnvelope, problemOf } from './error-envelope.filter';

describe('problemOf', () => {
  it.each([
    ['REQUEST.VALIDATION_FAILED', 400],
    ['AUTH.INVALID_TOKEN', 401],
    ['AUTH.FORBIDDEN', 403],
    ['CUSTOMER.NOT_FOUND', 404],
    ['IDEMPOTENCY.IN_FLIGHT', 409],
    ['REQUEST.BODY_TOO_LARGE', 413],
    ['REQUEST.UNSUPPORTED_MEDIA_TYPE', 415],
    ['IDEMPOTENCY.REFERENCE_REUSED', 422],
    ['RATE_LIMIT.EXCEEDED', 429],
    ['UPSTREAM.REJECTED', 502],
    ['AUDIT.UNAVAILABLE', 503],
    ['UPSTREAM.TIMEOUT', 504],
  ] as const)('when a domain error has the code %s, then the status is %i', (code, status) => {
    expect(problemOf(new DomainError(code)).status).toBe(status);
  });

  it('when the envelope is the 401, then it is the provider’s with the code added, as every other envelope has its code', () => {
    const unauthenticated = errorEnvelope(problemOf(new DomainError('AUTH.INVALID_TOKEN')), 'id');
    const forbidden = errorEnvelope(problemOf(new DomainError('AUTH.FORBIDDEN')), 'id');

    expect(Object.keys(unauthenticated.error).sort()).toEqual(['code', 'details', 'id', 'message']);
    expect(unauthenticated.error.code).toBe('AUTH.INVALID_TOKEN');
    expect(forbidden.error.code).toBe('AUTH.FORBIDDEN');
  });

  it('when a domain error carries details, fields and a retry hint, then they are kept', () => {
    const problem = problemOf(
      new DomainError('UPSTREAM.CIRCUIT_OPEN', {
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
      code: 'REQUEST.REFUSED',
      message: 'Bad Request',
      details: 'Bad Request',
    });
  });

  it('when a health check fails, then 503 says so and names no check, nor what it found', () => {
    const problem = problemOf(new ServiceUnavailableException({ status: 'error', error: { database: { status: 'down', message: 'ECONNREFUSED 10.0.0.1' } } }));

    expect(problem).toMatchObject({ status: 503, code: 'SERVICE.NOT_READY', details: 'Service Unavailable' });
    expect(JSON.stringify(problem)).not.toMatch(/database|10\.0\.0\.1/);
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

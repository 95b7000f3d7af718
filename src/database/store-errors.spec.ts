import { QueryFailedError } from 'typeorm';
import { DomainError } from '../common/domain/domain-error';
import { isDatabaseUnavailable, isRefusedData } from './store-errors';

/** A domain error of the service's own, made here: the database layer knows no feature. */
class AuditUnavailableLike extends DomainError {
  constructor() {
    super('AUDIT.UNAVAILABLE');
  }
}

const failed = (code: string) => new QueryFailedError('SELECT 1', [], Object.assign(new Error('x'), { code }));

describe('isDatabaseUnavailable', () => {
  it.each([
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['a dropped connection', new Error('Connection terminated unexpectedly')],
    ['a pool timeout', new Error('timeout exceeded when trying to connect')],
    ['an administrator shutdown (57P01)', failed('57P01')],
    ['a connection failure (08006)', failed('08006')],
    ['too many connections (53300)', failed('53300')],
    ['a database not accepting connections (55000)', failed('55000')],
  ])('when the error is %s, then the database is unavailable', (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation (23505)', failed('23505')],
    ['a syntax error (42601)', failed('42601')],
    ['a missing table (42P01)', failed('42P01')],
    ['a plain bug', new TypeError('x is undefined')],
    ['the service’s own error, which carries a code too (AUDIT.UNAVAILABLE)', new AuditUnavailableLike()],
  ])('when the error is %s, then it is not an availability problem', (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});

describe('isRefusedData', () => {
  it.each([
    ['a value too long (22001)', failed('22001'), true],
    ['a check constraint (23514)', failed('23514'), true],
    ['a unique violation (23505)', failed('23505'), true],
    ['an administrator shutdown (57P01)', failed('57P01'), false],
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), false],
    ['a plain bug', new TypeError('x is undefined'), false],
  ])('when the error is %s, then refused data is %s', (_, error, expected) => {
    expect(isRefusedData(error)).toBe(expected);
  });
});

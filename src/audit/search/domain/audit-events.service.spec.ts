import fc from 'fast-check';
import { decodeCursor, encodeCursor } from './audit-events.service';
import { InvalidCursor } from '../../../common/domain/list-cursor';

describe('audit cursors', () => {
  it('when a position is encoded, then decoding gives it back exactly', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('2000-01-01'), max: new Date('2200-01-01'), noInvalidDate: true }),
        fc.uuid(),
        fc.integer({ min: 0, max: 999 }),
        (date, id, micros) => {
          const occurredAt = date.toISOString().replace(/Z$/, `${String(micros).padStart(3, '0')}Z`);
          expect(decodeCursor(encodeCursor({ occurredAt, id }))).toEqual({ occurredAt, id });
        },
      ),
    );
  });

  it.each([
    '',
    'garbage',
    Buffer.from('[1,2]').toString('base64url'),
    Buffer.from('["2026-01-01", "x"]').toString('base64url'),
    // The shape of a time, not a time: PostgreSQL would refuse it (a 500, were it sent).
    Buffer.from('["2024-13-45T00:00:00.000000Z","9a7e3c1d-2b4f-4e6a-8c0d-1f2e3a4b5c6d"]').toString('base64url'),
    Buffer.from('["2026-02-30T25:61:00.000000Z","9a7e3c1d-2b4f-4e6a-8c0d-1f2e3a4b5c6d"]').toString('base64url'),
    // A real instant to JavaScript, but before PostgreSQL's first year (1).
    Buffer.from('["0000-12-31T23:59:59.999999Z","9a7e3c1d-2b4f-4e6a-8c0d-1f2e3a4b5c6d"]').toString('base64url'),
  ])('when the cursor is %p, then InvalidCursor', (cursor) => {
    expect(() => decodeCursor(cursor)).toThrow(InvalidCursor);
  });
});

import fc from 'fast-check';
import { decodeCursor, encodeCursor } from './audit-events.service';
import { InvalidAuditCursor } from './search.errors';

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

  it.each(['', 'garbage', Buffer.from('[1,2]').toString('base64url'), Buffer.from('["2026-01-01", "x"]').toString('base64url')])(
    'when the cursor is %p, then InvalidAuditCursor',
    (cursor) => {
      expect(() => decodeCursor(cursor)).toThrow(InvalidAuditCursor);
    },
  );
});

import { selectListOf } from './postgres-audit-search.repository';

type Column = Parameters<typeof selectListOf>[0][number];

const column = (databaseName: string, propertyName: string, type: Column['type'], more: Partial<Column> = {}): Column => ({
  isSelect: true,
  databaseName,
  propertyName,
  type,
  transformer: undefined,
  embeddedMetadata: undefined,
  relationMetadata: undefined,
  isVirtualProperty: false,
  ...more,
});

describe('the audit search: its SELECT list', () => {
  it('when the columns are of types pg reads as TypeORM does, then each is named as its property, and an unselected one is left out', () => {
    const list = selectListOf(
      [column('id', 'id', 'uuid'), column('occurred_at', 'occurredAt', 'timestamptz'), column('tx', 'tx', 'bigint', { isSelect: false })],
      'e',
    );

    expect(list).toBe('e."id" AS "id", e."occurred_at" AS "occurredAt"');
  });

  it.each<[string, Partial<Column>]>([
    ['a transformer', { transformer: { from: (value: unknown) => value, to: (value: unknown) => value } }],
    ['an embedded entity', { embeddedMetadata: {} as Column['embeddedMetadata'] }],
    ['a relation', { relationMetadata: {} as Column['relationMetadata'] }],
    ['a virtual property', { isVirtualProperty: true }],
    ['a type TypeORM converts (date)', { type: 'date' }],
    ['a type TypeORM converts (simple-json)', { type: 'simple-json' }],
    ['a type given as a constructor', { type: Number }],
  ])('when a selected column has %s, then the list is refused at start', (_, more) => {
    expect(() => selectListOf([column('id', 'id', 'uuid'), column('extra', 'extra', 'varchar', more)], 'e')).toThrow(
      /Column extra: TypeORM reads it otherwise/,
    );
  });
});

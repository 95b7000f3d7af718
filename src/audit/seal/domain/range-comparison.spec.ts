import { randomUUID } from 'node:crypto';
import { sha256, ManifestEntry } from './audit-seal';
import { compareRange } from './range-comparison';

function entries(count: number): ManifestEntry[] {
  return Array.from({ length: count }, (_, i) => ({ id: randomUUID(), hash: sha256(`event ${i}`) }));
}

describe('compareRange', () => {
  it('when the range holds what was sealed, in order, then nothing differs', () => {
    const sealed = entries(5);

    expect(compareRange(sealed, [...sealed])).toEqual({ altered: [], deleted: [], inserted: [], reordered: [] });
  });

  it('when one event’s hash changed, then it alone is altered, at its sealed position', () => {
    const sealed = entries(5);
    const found = sealed.map((entry, i) => (i === 2 ? { id: entry.id, hash: sha256('changed') } : entry));

    expect(compareRange(sealed, found)).toEqual({ altered: [{ id: sealed[2].id, position: 3 }], deleted: [], inserted: [], reordered: [] });
  });

  it('when one event is gone and another arrived, then each is named', () => {
    const sealed = entries(4);
    const stranger = { id: randomUUID(), hash: sha256('stranger') };
    const found = [sealed[0], stranger, sealed[2], sealed[3]];

    expect(compareRange(sealed, found)).toEqual({
      altered: [],
      deleted: [{ id: sealed[1].id, position: 2 }],
      inserted: [{ id: stranger.id, position: 2 }],
      reordered: [],
    });
  });

  it('when one event moved ten places, then that one event is reported, not the ten it passed', () => {
    const sealed = entries(12);
    const found = [...sealed.slice(1, 11), sealed[0], sealed[11]];

    expect(compareRange(sealed, found).reordered).toEqual([{ id: sealed[0].id, sealedPosition: 1, foundPosition: 11 }]);
  });

  it('when an id appears twice, then the second is an insertion', () => {
    const sealed = entries(2);
    const found = [sealed[0], sealed[1], sealed[1]];

    expect(compareRange(sealed, found).inserted).toEqual([{ id: sealed[1].id, position: 3 }]);
  });
});

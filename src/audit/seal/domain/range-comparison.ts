import { ManifestEntry } from './audit-seal';

/** What changed in one checkpoint's range, event by event. */
export interface RangeDifferences {
  /** Present in both, with another hash. */
  readonly altered: { id: string; position: number }[];
  /** Sealed, and no longer in the range. */
  readonly deleted: { id: string; position: number }[];
  /** In the range, and never sealed there. */
  readonly inserted: { id: string; position: number }[];
  /** Present in both, and out of their sealed order (the fewest events that explain it). */
  readonly reordered: { id: string; sealedPosition: number; foundPosition: number }[];
}

/**
 * Compares what a checkpoint sealed with what its range holds now. Positions count from 1 in seal
 * order. Reordering is reported as the events outside a longest run kept in sealed order, so that
 * one event moved ten places is one finding, not ten.
 */
export function compareRange(sealed: readonly ManifestEntry[], found: readonly ManifestEntry[]): RangeDifferences {
  const sealedAt = new Map<string, number>();
  sealed.forEach((entry, index) => sealedAt.set(entry.id, index));
  const seen = new Uint8Array(sealed.length);
  const altered: RangeDifferences['altered'] = [];
  const inserted: RangeDifferences['inserted'] = [];
  const common: { id: string; sealedIndex: number; foundIndex: number }[] = [];
  found.forEach((entry, foundIndex) => {
    const sealedIndex = sealedAt.get(entry.id);
    if (sealedIndex === undefined || seen[sealedIndex]) {
      inserted.push({ id: entry.id, position: foundIndex + 1 });
      return;
    }
    seen[sealedIndex] = 1;
    if (!entry.hash.equals(sealed[sealedIndex].hash)) altered.push({ id: entry.id, position: sealedIndex + 1 });
    common.push({ id: entry.id, sealedIndex, foundIndex });
  });
  const deleted = sealed.flatMap((entry, index) => (seen[index] ? [] : [{ id: entry.id, position: index + 1 }]));
  const inOrder = longestIncreasingRun(common.map((event) => event.sealedIndex));
  const reordered = common
    .filter((_, index) => !inOrder.has(index))
    .map((event) => ({ id: event.id, sealedPosition: event.sealedIndex + 1, foundPosition: event.foundIndex + 1 }));
  return { altered, deleted, inserted, reordered };
}

/** Indexes of one longest strictly increasing subsequence (patience sorting, O(n log n)). */
function longestIncreasingRun(values: readonly number[]): Set<number> {
  const tails: number[] = [];
  const previous = new Int32Array(values.length).fill(-1);
  values.forEach((value, index) => {
    let low = 0;
    let high = tails.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (values[tails[middle]] < value) low = middle + 1;
      else high = middle;
    }
    if (low > 0) previous[index] = tails[low - 1];
    tails[low] = index;
  });
  const run = new Set<number>();
  for (let index = tails.length > 0 ? tails[tails.length - 1] : -1; index >= 0; index = previous[index]) run.add(index);
  return run;
}

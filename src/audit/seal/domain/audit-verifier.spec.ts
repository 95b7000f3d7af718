import { Findings } from './audit-verifier';

describe('Findings (what audit:verify gathers)', () => {
  it('when an event is gone from one checkpoint and inserted in another, then it is one finding, a move, naming both places', () => {
    const findings = new Findings();
    findings.deleted({ kind: 'deleted', event_id: 'e-1', checkpoint: 2, position: 5, detail: 'event e-1 (checkpoint #2, position 5) is gone' });
    findings.inserted({
      kind: 'inserted',
      event_id: 'e-1',
      checkpoint: 4,
      position: 1,
      detail: 'event e-1 is in the range of checkpoint #4 (position 1), which never sealed it',
    });

    findings.settle();

    expect(findings.count).toBe(1);
    expect(findings.listed(10)).toEqual([
      {
        kind: 'moved',
        event_id: 'e-1',
        checkpoint: 2,
        position: 5,
        detail: 'event e-1, sealed by #2 at position 5, is now in the range of checkpoint #4 (position 1), which never sealed it',
      },
    ]);
  });

  it('when deletions and insertions name different events, then each stays what it is, listed in order of place and counted before settling too', () => {
    const findings = new Findings();
    findings.inserted({ kind: 'inserted', event_id: 'e-9', checkpoint: 3, position: 2, detail: 'in' });
    findings.add({ kind: 'chain_broken', checkpoint: 3, detail: 'link' });
    findings.deleted({ kind: 'deleted', event_id: 'e-1', checkpoint: 1, position: 7, detail: 'gone' });
    expect(findings.count).toBe(3);

    findings.settle();

    expect(findings.listed(10).map((finding) => [finding.kind, finding.checkpoint, finding.position])).toEqual([
      ['deleted', 1, 7],
      ['chain_broken', 3, undefined],
      ['inserted', 3, 2],
    ]);
    expect(findings.listed(2)).toHaveLength(2);
    expect(findings.count).toBe(3);
  });
});

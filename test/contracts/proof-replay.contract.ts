import { randomUUID } from 'node:crypto';
import type { ProofReplay } from '../../src/auth/domain/proof-replay.port';

const inAMinute = () => new Date(Date.now() + 60_000);

/** What every ProofReplay must do: a proof is used once, however many ask at once (RFC 9449 section 11.1). */
export function proofReplayContract(subject: () => ProofReplay): void {
  it('when a key is used, then its first use is accepted and every later one is a replay', async () => {
    const key = randomUUID();

    expect(await subject().useOnce(key, inAMinute())).toBe(true);
    expect(await subject().useOnce(key, inAMinute())).toBe(false);
  });

  it('when many requests use keys at once, some the same key, then each key is accepted exactly once', async () => {
    const keys = Array.from({ length: 40 }, () => randomUUID());
    const uses = [...keys, ...keys, ...keys].sort(() => Math.random() - 0.5);

    const answers = await Promise.all(
      uses.map((key) =>
        subject()
          .useOnce(key, inAMinute())
          .then((first) => ({ key, first })),
      ),
    );

    for (const key of keys) expect(answers.filter((answer) => answer.key === key && answer.first)).toHaveLength(1);
  });

  it('when a key’s window has passed, then it may be used again (its proof is too old by then anyway)', async () => {
    const key = randomUUID();
    await subject().useOnce(key, new Date(Date.now() - 1000));

    expect(await subject().useOnce(key, inAMinute())).toBe(true);
  });

  it('when keys differ only in characters a statement would have to escape, then each is its own key', async () => {
    const base = randomUUID();
    const keys = ['"', '\\', ',', '{}', "'", '\u00e9', 'NULL'].map((odd) => `${base}${odd}`);

    const first = await Promise.all(keys.map((key) => subject().useOnce(key, inAMinute())));
    const again = await Promise.all(keys.map((key) => subject().useOnce(key, inAMinute())));

    expect(first).toEqual(keys.map(() => true));
    expect(again).toEqual(keys.map(() => false));
  });
}

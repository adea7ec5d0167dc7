/**
 * The read batcher (src/db/read-batcher.ts): the keys of one turn leave as one batch, a key never
 * joins a batch already sent, keys wait while `maxInFlight` batches are out and then leave
 * together, large waits are split at `maxBatch`, and a failed batch fails only its own callers.
 * The batch read here is the test's own function, which records each batch and answers when the
 * test releases it.
 */
import { describe, expect, it } from 'vitest';
import { ReadBatcher } from '../../src/db/read-batcher.js';

interface SentBatch {
  keys: string[];
  answer(values: Record<string, number>): void;
  fail(err: Error): void;
}

/** A batcher over a read that the test answers by hand, and the batches it sent so far. */
function controlled(maxInFlight: number, maxBatch = 100) {
  const sent: SentBatch[] = [];
  const batcher = new ReadBatcher<string, number>(
    (keys) =>
      new Promise((resolve, reject) => {
        sent.push({ keys: [...keys], answer: (v) => resolve(new Map(Object.entries(v))), fail: reject });
      }),
    { maxInFlight, maxBatch },
  );
  return { batcher, sent };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('ReadBatcher', () => {
  it('sends the keys of one turn as one batch; equal keys share it; a missing key answers undefined', async () => {
    const { batcher, sent } = controlled(4);
    const answers = Promise.all([batcher.get('a'), batcher.get('b'), batcher.get('a'), batcher.get('z')]);
    await turn();
    expect(sent.map((b) => b.keys)).toEqual([['a', 'b', 'z']]);
    sent[0]!.answer({ a: 1, b: 2 });
    expect(await answers).toEqual([1, 2, 1, undefined]);
    expect(batcher.stats).toEqual({ asked: 4, batches: 1 });
  });

  it('never adds a key to a batch already sent: it leaves in a later one', async () => {
    const { batcher, sent } = controlled(4);
    const first = batcher.get('a');
    await turn();
    const second = batcher.get('a');
    await turn();
    expect(sent.map((b) => b.keys)).toEqual([['a'], ['a']]);
    sent[1]!.answer({ a: 2 });
    sent[0]!.answer({ a: 1 });
    expect(await first).toBe(1);
    expect(await second).toBe(2);
  });

  it('keeps keys waiting while maxInFlight batches are out, then sends them together', async () => {
    const { batcher, sent } = controlled(2);
    const early = [batcher.get('a')];
    await turn();
    early.push(batcher.get('b'));
    await turn();
    const late = [batcher.get('c'), batcher.get('d')];
    await turn();
    const later = batcher.get('e');
    await turn();
    expect(sent.map((b) => b.keys)).toEqual([['a'], ['b']]); // two out: c, d and e wait
    sent[0]!.answer({ a: 1 });
    expect(await early[0]).toBe(1);
    expect(sent.map((b) => b.keys)).toEqual([['a'], ['b'], ['c', 'd', 'e']]);
    sent[2]!.answer({ c: 3, d: 4, e: 5 });
    sent[1]!.answer({ b: 2 });
    expect(await Promise.all([...early, ...late, later])).toEqual([1, 2, 3, 4, 5]);
    expect(batcher.stats).toEqual({ asked: 5, batches: 3 });
  });

  it('splits a wait larger than maxBatch into several batches', async () => {
    const { batcher, sent } = controlled(4, 3);
    const keys = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    const answers = Promise.all(keys.map((k) => batcher.get(k)));
    await turn();
    expect(sent.map((b) => b.keys)).toEqual([['a', 'b', 'c'], ['d', 'e', 'f'], ['g']]);
    for (const b of sent) b.answer(Object.fromEntries(b.keys.map((k) => [k, k.charCodeAt(0)])));
    expect(await answers).toEqual(keys.map((k) => k.charCodeAt(0)));
  });

  it('fails only the callers of a failed batch; the next batch is answered', async () => {
    const { batcher, sent } = controlled(4);
    const failed = Promise.allSettled([batcher.get('a'), batcher.get('b')]);
    await turn();
    const next = batcher.get('a');
    await turn();
    sent[0]!.fail(new Error('connection lost'));
    sent[1]!.answer({ a: 1 });
    const outcomes = await failed;
    expect(outcomes.map((o) => (o.status === 'rejected' ? (o.reason as Error).message : o.status))).toEqual(['connection lost', 'connection lost']);
    expect(await next).toBe(1);
  });
});

import { describe, expect, it } from 'vitest';
import { newestOnly } from './newest';

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<T>((ok, no) => ((resolve = ok), (reject = no)));
  return { promise, resolve, reject };
}

describe('newestOnly', () => {
  it('applies only the newest read, whatever order the answers come in', async () => {
    const run = newestOnly();
    const older = deferred<string>();
    const newer = deferred<string>();
    const applied: string[] = [];
    const a = run(() => older.promise, (v) => applied.push(v));
    const b = run(() => newer.promise, (v) => applied.push(v));
    newer.resolve('new');
    await b;
    older.resolve('old');
    await a;
    expect(applied).toEqual(['new']);
  });

  it('reports the newest read\'s failure, and not an older one\'s', async () => {
    const run = newestOnly();
    const older = deferred<string>();
    const failures: string[] = [];
    const a = run(() => older.promise, () => {}, (e) => failures.push(e.message));
    await run(() => Promise.reject(new Error('newest failed')), () => {}, (e) => failures.push(e.message));
    older.reject(new Error('older failed'));
    await a;
    expect(failures).toEqual(['newest failed']);
  });
});

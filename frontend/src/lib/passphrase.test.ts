import { describe, expect, it } from 'vitest';
import raw from './passphrase.vectors.json?raw';
import { assessPassphrase } from './passphrase';

// The same file holds the Go side (backend/vault/strength_test.go) to the
// same answers, so `yett init` and the setup screen rank alike.
const vectors = JSON.parse(raw) as { passphrase: string; strength: string; bits: number }[];

describe('assessPassphrase and yett init', () => {
  it('has vectors to check', () => {
    expect(vectors.length).toBeGreaterThanOrEqual(10);
  });
  for (const v of vectors) {
    it(`ranks ${JSON.stringify(v.passphrase)} as ${v.strength}`, () => {
      const got = assessPassphrase(v.passphrase);
      expect({ strength: got.strength, bits: got.bits }).toEqual({ strength: v.strength, bits: v.bits });
    });
  }
});

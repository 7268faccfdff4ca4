// Client-side guidance for choosing the vault passphrase. The backend's KDF
// is what makes guessing slow; this only keeps people from choosing something
// a guesser tries first. The backend enforces its own minimum as well.

export const MIN_PASSPHRASE_LENGTH = 12;

export type Strength = 'too short' | 'weak' | 'fair' | 'strong';

export interface PassphraseAssessment {
  strength: Strength;
  /** A rough guessing-entropy estimate in bits, for the meter. */
  bits: number;
  /** Advice that follows the strength's name: it never repeats it. */
  hint: string;
}

/** "Too short", "Weak", "Fair", "Strong". */
export function strengthLabel(s: Strength): string {
  return s[0].toUpperCase() + s.slice(1);
}

function charsetSize(p: string): number {
  let size = 0;
  if (/[a-z]/.test(p)) size += 26;
  if (/[A-Z]/.test(p)) size += 26;
  if (/[0-9]/.test(p)) size += 10;
  if (/[^a-zA-Z0-9]/.test(p)) size += 33;
  return size;
}

/**
 * Estimates strength from length and character variety, discounting repeats
 * and runs ("aaaa", "1234", "abcd") which guessers try early.
 */
export function assessPassphrase(p: string): PassphraseAssessment {
  const chars = [...p];
  if (chars.length < MIN_PASSPHRASE_LENGTH) {
    return {
      strength: 'too short',
      bits: 0,
      hint: `use at least ${MIN_PASSPHRASE_LENGTH} characters. Four or more unrelated words work well.`,
    };
  }
  let effective = 0;
  for (let i = 0; i < chars.length; i++) {
    const prev = i > 0 ? chars[i - 1].codePointAt(0)! : NaN;
    const cur = chars[i].codePointAt(0)!;
    const step = cur - prev;
    // Repeats and ±1 runs add almost nothing for a guesser.
    effective += step === 0 || step === 1 || step === -1 ? 0.25 : 1;
  }
  const unique = new Set(chars).size;
  const bits = Math.round(effective * Math.log2(Math.max(charsetSize(p), 2)) * Math.min(1, unique / 8));
  if (bits < 50) {
    return { strength: 'weak', bits, hint: 'easy to guess. Add more unrelated words or characters.' };
  }
  if (bits < 75) {
    return { strength: 'fair', bits, hint: 'a few more words would make it much stronger.' };
  }
  return { strength: 'strong', bits, hint: 'write it down somewhere safe: Yett cannot recover it.' };
}

/** The hint as its own sentence, for when the strength is not shown before it. */
export function hintSentence(a: PassphraseAssessment): string {
  return a.hint[0].toUpperCase() + a.hint.slice(1);
}

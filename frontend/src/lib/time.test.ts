import { describe, expect, it } from 'vitest';
import { formatAge, formatWhen } from './time';

// Ages and due dates in calendar days of the local zone (tests run in the
// machine's zone: the times are at noon, far from any day's edge).
const at = (d: string) => new Date(`${d}T12:00:00`).getTime();
const iso = (d: string) => new Date(at(d)).toISOString();

describe('formatAge and formatWhen', () => {
  it('says how long ago, in days, months and years', () => {
    const now = at('2026-12-10');
    expect(formatAge(iso('2026-12-10'), now)).toBe('today');
    expect(formatAge(iso('2026-12-09'), now)).toBe('yesterday');
    expect(formatAge(iso('2026-11-28'), now)).toBe('12 days ago');
    expect(formatAge(iso('2026-10-12'), now)).toBe('59 days ago');
    expect(formatAge(iso('2026-07-01'), now)).toBe('5 months ago');
    expect(formatAge(iso('2024-12-01'), now)).toBe('2 years ago');
    expect(formatAge('not a time', now)).toBe('not a time');
  });

  it('says when a date falls, ahead or behind', () => {
    const now = at('2026-12-10');
    expect(formatWhen(iso('2026-12-10'), now)).toBe('today');
    expect(formatWhen(iso('2026-12-11'), now)).toBe('tomorrow');
    expect(formatWhen(iso('2027-01-08'), now)).toBe('in 29 days');
    expect(formatWhen(iso('2026-12-09'), now)).toBe('yesterday');
    expect(formatWhen(iso('2026-11-30'), now)).toBe('10 days ago');
  });
});

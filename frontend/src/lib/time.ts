// Formatting of the countdowns the status bar and unlock screen show.

/** "7h 59m", "4m 05s", "12s"; never negative. */
export function formatRemaining(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return `${h}h ${String(m).padStart(2, '0')}m`;
  if (m > 0) return `${m}m ${String(s).padStart(2, '0')}s`;
  return `${s}s`;
}

/** Milliseconds until an RFC 3339 deadline, or null when there is none. */
export function msUntil(deadline: string, now: number): number | null {
  if (deadline === '') return null;
  const t = Date.parse(deadline);
  if (Number.isNaN(t)) return null;
  return t - now;
}

/** A local date and time for a stored RFC 3339 timestamp. */
export function formatTimestamp(rfc3339: string): string {
  const t = Date.parse(rfc3339);
  if (Number.isNaN(t)) return rfc3339;
  return new Date(t).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/**
 * The calendar day of an RFC 3339 timestamp or a YYYY-MM-DD date, as written
 * (a review date is a day, not an instant: it must not shift with the zone).
 */
export function formatDay(value: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(value);
  if (!m) return value;
  const day = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return day.toLocaleDateString(undefined, { dateStyle: 'medium', timeZone: 'UTC' });
}

const DAY = 24 * 60 * 60 * 1000;

/** Local calendar days from a to b (b later is positive). */
function calendarDays(a: number, b: number): number {
  const day = (t: number) => {
    const d = new Date(t);
    return Date.UTC(d.getFullYear(), d.getMonth(), d.getDate());
  };
  return Math.round((day(b) - day(a)) / DAY);
}

/**
 * How long ago a stored RFC 3339 time was, in words: "today", "yesterday",
 * "12 days ago", "5 months ago", "2 years ago".
 */
export function formatAge(rfc3339: string, now: number): string {
  const t = Date.parse(rfc3339);
  if (Number.isNaN(t)) return rfc3339;
  const days = calendarDays(t, now);
  if (days < 1) return 'today';
  if (days === 1) return 'yesterday';
  if (days < 60) return `${days} days ago`;
  if (days < 730) return `${Math.floor(days / 30)} months ago`;
  return `${Math.floor(days / 365)} years ago`;
}

/**
 * When a stored RFC 3339 time falls, seen from now, in calendar days:
 * "today", "tomorrow", "in 12 days"; past: "yesterday", "12 days ago".
 */
export function formatWhen(rfc3339: string, now: number): string {
  const t = Date.parse(rfc3339);
  if (Number.isNaN(t)) return rfc3339;
  const days = calendarDays(now, t);
  if (days === 0) return 'today';
  if (days === 1) return 'tomorrow';
  if (days > 1) return `in ${days} days`;
  return formatAge(rfc3339, now);
}

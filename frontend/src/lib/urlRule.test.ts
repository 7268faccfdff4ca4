import { describe, expect, it } from 'vitest';
import table from './urlRule.cases.json';
import { plainHttpAllowed, rawHost, secureUrlError } from './urlRule';

describe('the plain http rule', () => {
  it('agrees with the backend on every shared case', () => {
    expect(table.cases.length).toBeGreaterThan(10);
    for (const c of table.cases) {
      const host = rawHost(c.url);
      expect(host, c.url).not.toBeNull();
      expect(plainHttpAllowed(decodeURIComponent(host as string)), c.url).toBe(c.plain);
      expect(secureUrlError(c.url) === null, c.url).toBe(c.plain);
    }
  });

  it('accepts https anywhere and refuses other schemes', () => {
    expect(secureUrlError('https://api.example.com/x')).toBeNull();
    expect(secureUrlError('ftp://127.0.0.1/')).not.toBeNull();
    expect(secureUrlError('http://user@127.0.0.1/')).not.toBeNull();
  });
});

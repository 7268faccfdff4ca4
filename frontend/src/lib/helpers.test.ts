import { afterEach, describe, expect, it, vi } from 'vitest';
import { assessPassphrase, MIN_PASSPHRASE_LENGTH } from './passphrase';
import { formatDay, formatRemaining, msUntil } from './time';
import { emptyDraft, splitList, validateDraft } from './credentialForm';
import { watchActivity } from './activity';
import { installBridge } from '../test/fakeBridge';

describe('assessPassphrase', () => {
  it('calls anything under the minimum too short', () => {
    expect(assessPassphrase('a'.repeat(MIN_PASSPHRASE_LENGTH - 1)).strength).toBe('too short');
    expect(assessPassphrase('').strength).toBe('too short');
  });

  it('ranks repeats and runs below varied passphrases', () => {
    expect(assessPassphrase('aaaaaaaaaaaa').strength).toBe('weak');
    expect(assessPassphrase('abcdefghijkl').strength).toBe('weak');
    expect(assessPassphrase('correct horse battery staple').strength).toBe('strong');
    expect(assessPassphrase('aaaaaaaaaaaa').bits).toBeLessThan(assessPassphrase('q7#Lm2!vR9zT').bits);
  });

  it('counts characters, not UTF-16 units', () => {
    expect(assessPassphrase('😀'.repeat(6)).strength).toBe('too short');
  });
});

describe('time', () => {
  it('formats countdowns', () => {
    expect(formatRemaining(8 * 3600_000)).toBe('8h 00m');
    expect(formatRemaining(245_000)).toBe('4m 05s');
    expect(formatRemaining(11_200)).toBe('12s');
    expect(formatRemaining(-5)).toBe('0s');
  });

  it('measures time to an RFC 3339 deadline', () => {
    const now = Date.parse('2026-11-29T18:00:00Z');
    expect(msUntil('2026-11-29T18:01:00Z', now)).toBe(60_000);
    expect(msUntil('', now)).toBeNull();
    expect(msUntil('not a time', now)).toBeNull();
  });
});

describe('validateDraft', () => {
  const valid = () => ({ ...emptyDraft(), name: ' gh ', secret: 'CANARY-unit-1', hosts: 'API.example.com, api.example.com\nuploads.example.com' });

  it('accepts a bearer credential and normalises hosts', () => {
    const { errors, form } = validateDraft(valid());
    expect(errors).toEqual({});
    expect(form.name).toBe('gh');
    expect(form.hosts).toEqual(['api.example.com', 'uploads.example.com']);
    expect(form.headerName).toBe('');
    expect(form.template).toBe('');
  });

  it('requires name, secret and a host', () => {
    const { errors } = validateDraft(emptyDraft());
    expect(Object.keys(errors).sort()).toEqual(['hosts', 'name', 'secret']);
  });

  it('requires {secret} in a header template and a valid header name', () => {
    const { errors } = validateDraft({ ...valid(), format: 'header', headerName: 'X Api', template: 'Token' });
    expect(errors.headerName).toBeDefined();
    expect(errors.template).toContain('{secret}');
  });

  it('requires a user name without a colon for basic', () => {
    expect(validateDraft({ ...valid(), format: 'basic' }).errors.username).toBeDefined();
    expect(validateDraft({ ...valid(), format: 'basic', username: 'a:b' }).errors.username).toBeDefined();
    const { errors, form } = validateDraft({ ...valid(), format: 'basic', username: ' deploy ', template: 'x{secret}' });
    expect(errors).toEqual({});
    expect(form.username).toBe('deploy');
    expect(form.template).toBe('');
  });

  it('refuses URLs as hosts and paths without a leading slash', () => {
    expect(validateDraft({ ...valid(), hosts: 'https://api.example.com' }).errors.hosts).toContain('https://');
    expect(validateDraft({ ...valid(), hosts: 'api.example.com/v1' }).errors.hosts).toBeDefined();
    expect(validateDraft({ ...valid(), pathPrefixes: '/v1 v2' }).errors.pathPrefixes).toContain('v2');
  });

  it('never echoes the secret in an error', () => {
    const { errors } = validateDraft({ ...valid(), secret: 'CANARY-unit-\nline' });
    expect(errors.secret).toBeDefined();
    expect(JSON.stringify(errors)).not.toContain('CANARY');
  });

  it('splits lists on commas, spaces and new lines, dropping duplicates', () => {
    expect(splitList(' a, b\n\nc  a ')).toEqual(['a', 'b', 'c']);
  });
});

describe('watchActivity', () => {
  afterEach(() => vi.useRealTimers());

  it('calls Touch at most once per interval', async () => {
    const bridge = installBridge();
    let t = 1_000_000;
    const target = new EventTarget();
    const stop = watchActivity(target, 30_000, () => t);
    target.dispatchEvent(new Event('keydown'));
    target.dispatchEvent(new Event('pointerdown'));
    t += 29_999;
    target.dispatchEvent(new Event('keydown'));
    expect(bridge.VaultService.Touch).toHaveBeenCalledTimes(1);
    t += 1;
    target.dispatchEvent(new Event('wheel'));
    expect(bridge.VaultService.Touch).toHaveBeenCalledTimes(2);
    stop();
    t += 60_000;
    target.dispatchEvent(new Event('keydown'));
    expect(bridge.VaultService.Touch).toHaveBeenCalledTimes(2);
  });

  it('swallows a failed Touch', async () => {
    const bridge = installBridge();
    bridge.VaultService.Touch.mockRejectedValue('vault is locked');
    const target = new EventTarget();
    watchActivity(target, 30_000, () => 0);
    target.dispatchEvent(new Event('keydown'));
    await Promise.resolve();
    expect(bridge.VaultService.Touch).toHaveBeenCalledTimes(1);
  });
});

describe('formatDay', () => {
  it('shows the calendar day as written, whatever the local zone', () => {
    expect(formatDay('2027-02-01T23:30:00-05:00')).toBe(formatDay('2027-02-01'));
    expect(formatDay('2027-02-01T00:00:00Z')).toContain('2027');
    expect(formatDay('2027-02-01T00:00:00Z')).not.toContain('31');
    expect(formatDay('someday')).toBe('someday');
  });
});

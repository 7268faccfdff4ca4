import { describe, expect, it } from 'vitest';
import {
  emptyOperation,
  emptyParam,
  splitAllowed,
  urlPlaceholders,
  urlTemplateError,
  validateOperation,
  type OperationDraft,
} from './operationForm';

describe('urlPlaceholders', () => {
  const cases: [string, string[]][] = [
    ['https://api.example.com/issues', []],
    ['https://api.example.com/projects/{project}/issues', ['project']],
    ['https://api.example.com/{a}/{b}/{a}?state={state}', ['a', 'b', 'state']],
    ['https://api.example.com/{}', ['']],
  ];
  for (const [template, want] of cases) {
    it(template, () => expect(urlPlaceholders(template)).toEqual(want));
  }
});

describe('urlTemplateError', () => {
  const cases: [string, string | null][] = [
    ['https://api.example.com/projects/{project}/issues', null],
    ['https://api.example.com:8443/v1/{id}?expand={expand}', null],
    ['HTTPS://api.example.com/', null],
    ['http://api.example.com/issues', 'https://'],
    // Plain http to this computer, as the backend and `yett operation add` accept it.
    ['http://127.0.0.1:8080/issues/{id}', null],
    ['http://localhost/x', null],
    ['http://[::1]:9000/x', null],
    ['http://127.1/x', 'https://'],
    ['api.example.com/issues', 'https://'],
    ['https://', 'needs a host'],
    ['https:///issues', 'needs a host'],
    ['https://{tenant}.example.com/issues', 'host'],
    ['https://api.example.com{port}/x', 'host'],
    ['https://user@api.example.com/x', '@'],
    ['https://api.example.com/x#{frag}', 'fragment'],
    ['https://api.example.com/{project/issues', 'pair up'],
    ['https://api.example.com/project}/issues', 'pair up'],
    ['https://api.example.com/{{x}}', 'pair up'],
    ['https://api.example.com/{}', 'letters, digits and _'],
    ['https://api.example.com/{pro-ject}', 'letters, digits and _'],
  ];
  for (const [template, want] of cases) {
    it(template, () => {
      const got = urlTemplateError(template);
      if (want === null) expect(got).toBeNull();
      else expect(got).toContain(want);
    });
  }
});

describe('splitAllowed', () => {
  it('trims, drops empty values and repeats, keeps spaces inside a value', () => {
    expect(splitAllowed(' alpha, beta ,,alpha, in progress ')).toEqual(['alpha', 'beta', 'in progress']);
    expect(splitAllowed('')).toEqual([]);
  });
});

describe('validateOperation', () => {
  const good = (): OperationDraft => ({
    ...emptyOperation('auth-1'),
    name: 'tracker.create_issue',
    method: 'POST',
    urlTemplate: ' https://api.example.com/projects/{project}/issues ',
    params: [{ ...emptyParam('project'), allowed: 'alpha, beta' }],
    bodySchema: '{"type":"object"}',
  });

  it('accepts a complete draft and builds the operation', () => {
    const { errors, op } = validateOperation(good(), ['auth-1']);
    expect(errors).toEqual({});
    expect(op).toEqual({
      name: 'tracker.create_issue',
      authorizationId: 'auth-1',
      description: '',
      method: 'POST',
      urlTemplate: 'https://api.example.com/projects/{project}/issues',
      params: [{ name: 'project', type: 'string', allowed: ['alpha', 'beta'], pattern: '', required: true }],
      bodySchema: '{"type":"object"}',
      approval: 'per_call',
      readOnly: false,
    });
  });

  const cases: { name: string; change: (d: OperationDraft) => void; field: string; want: string }[] = [
    { name: 'empty name', change: (d) => (d.name = ''), field: 'name', want: 'Name the operation' },
    { name: 'uppercase name', change: (d) => (d.name = 'Tracker.create'), field: 'name', want: 'lowercase' },
    { name: 'name with a space', change: (d) => (d.name = 'tracker create'), field: 'name', want: 'lowercase' },
    { name: 'unknown authorization', change: (d) => (d.authorizationId = 'auth-2'), field: 'authorizationId', want: 'Choose' },
    { name: 'placeholder without a row', change: (d) => (d.params = []), field: 'urlTemplate', want: '{project}' },
    { name: 'http URL', change: (d) => (d.urlTemplate = 'http://api.example.com/{project}'), field: 'urlTemplate', want: 'https' },
    { name: 'body schema on GET', change: (d) => (d.method = 'GET'), field: 'bodySchema', want: 'no body' },
    { name: 'body schema not JSON', change: (d) => (d.bodySchema = '{type: object}'), field: 'bodySchema', want: 'not valid JSON' },
    { name: 'body schema an array', change: (d) => (d.bodySchema = '[]'), field: 'bodySchema', want: 'JSON object' },
  ];
  for (const c of cases) {
    it(`refuses ${c.name}`, () => {
      const d = good();
      c.change(d);
      const { errors } = validateOperation(d, ['auth-1']);
      expect((errors as Record<string, unknown>)[c.field]).toContain(c.want);
    });
  }

  const paramCases: { name: string; param: Partial<ReturnType<typeof emptyParam>>; want: string }[] = [
    { name: 'a bad parameter name', param: { name: 'pro ject' }, want: 'letters, digits and _' },
    { name: 'an integer parameter with a text value', param: { type: 'integer', allowed: '1, two' }, want: '“two” is not an integer' },
    { name: 'an invalid pattern', param: { pattern: '([a-z' }, want: 'not a valid regular expression' },
    { name: 'an allowed value outside the pattern', param: { pattern: '[a-z]+', allowed: 'alpha, B2' }, want: '“B2” does not match' },
  ];
  for (const c of paramCases) {
    it(`refuses ${c.name}`, () => {
      const d = good();
      d.params = [{ ...d.params[0], ...c.param }];
      const { errors } = validateOperation(d, ['auth-1']);
      expect(errors.params?.[0]).toContain(c.want);
    });
  }

  it('refuses a parameter listed twice', () => {
    const d = good();
    d.params = [emptyParam('project'), emptyParam('project')];
    expect(validateOperation(d, ['auth-1']).errors.params).toEqual({ 1: '“project” is listed twice.' });
  });

  it('accepts a parameter that is not in the URL (sent in the query) and an integer range by pattern', () => {
    const d = good();
    d.params.push({ ...emptyParam('limit'), type: 'integer', pattern: '[0-9]{1,3}', required: false });
    expect(validateOperation(d, ['auth-1']).errors).toEqual({});
  });
});

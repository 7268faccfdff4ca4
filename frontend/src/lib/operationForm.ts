// Validation of the named-operation editor before anything is sent. A named
// operation is the only way an agent acts through an OAuth authorization, so
// its URL template must pin the scheme and host: placeholders may appear in
// the path and query only, and each one needs a parameter row that says
// which values an agent may put there. The backend validates again.
import { secureUrlError } from './urlRule';

import { HTTP_METHODS, type ApprovalMode, type HttpMethod, type OperationView, type ParamType } from './backend';

export interface ParamDraft {
  name: string;
  type: ParamType;
  /** Allowed values separated by commas; empty allows any value matching pattern. */
  allowed: string;
  pattern: string;
  required: boolean;
}

export interface OperationDraft {
  name: string;
  authorizationId: string;
  description: string;
  method: HttpMethod;
  urlTemplate: string;
  params: ParamDraft[];
  bodySchema: string;
  approval: ApprovalMode;
  /** The person says it only reads (agents' clients are told so). */
  readOnly: boolean;
}

export type OperationErrors = Partial<Record<Exclude<keyof OperationDraft, 'params'>, string>> & {
  /** Per parameter row, by index. */
  params?: Record<number, string>;
};

export const OPERATION_NAME = /^[a-z0-9._-]+$/;
const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PLACEHOLDER = /\{([^{}]*)\}/g;

export function emptyParam(name = ''): ParamDraft {
  return { name, type: 'string', allowed: '', pattern: '', required: true };
}

export function emptyOperation(authorizationId = ''): OperationDraft {
  return {
    name: '',
    authorizationId,
    description: '',
    method: 'GET',
    urlTemplate: 'https://',
    params: [],
    bodySchema: '',
    approval: 'per_call',
    readOnly: false,
  };
}

/** The {placeholder} names of a URL template, in order, each once. */
export function urlPlaceholders(template: string): string[] {
  const seen = new Set<string>();
  for (const m of template.matchAll(PLACEHOLDER)) seen.add(m[1]);
  return [...seen];
}

/** Values separated by commas, trimmed, empty ones and repeats dropped. */
export function splitAllowed(text: string): string[] {
  const seen = new Set<string>();
  for (const part of text.split(',')) {
    const v = part.trim();
    if (v !== '') seen.add(v);
  }
  return [...seen];
}

/**
 * Why a URL template cannot be used, or null. It must be https with a fixed
 * host: a placeholder in the host would let an agent choose where the
 * authorization's access token is sent.
 */
export function urlTemplateError(template: string): string | null {
  const t = template.trim();
  const scheme = t.match(/^(https?):\/\//i);
  if (!scheme) return 'The URL must start with https://.';
  const rest = t.slice(scheme[0].length);
  const authority = rest.split(/[/?#]/, 1)[0];
  if (authority === '') return `The URL needs a host after ${scheme[0]}.`;
  if (authority.includes('{') || authority.includes('}')) return 'A placeholder cannot be part of the host.';
  if (authority.includes('@')) return 'The host cannot contain @.';
  const insecure = secureUrlError(t);
  if (insecure !== null) return insecure;
  if (t.includes('#')) return 'The URL cannot have a #fragment.';
  const opens = (t.match(/\{/g) ?? []).length;
  const closes = (t.match(/\}/g) ?? []).length;
  const names = [...t.matchAll(PLACEHOLDER)].map((m) => m[1]);
  if (opens !== closes || opens !== names.length) return 'Braces must pair up as {name}.';
  const bad = names.find((n) => !PARAM_NAME.test(n));
  if (bad !== undefined) return `“{${bad}}”: a placeholder name uses letters, digits and _ only.`;
  try {
    new URL(t.replace(PLACEHOLDER, 'x'));
  } catch {
    return 'This is not a valid URL.';
  }
  return null;
}

function paramError(p: ParamDraft, names: Set<string>): string | null {
  const name = p.name.trim();
  if (!PARAM_NAME.test(name)) return 'Name the parameter with letters, digits and _ only.';
  if (names.has(name)) return `“${name}” is listed twice.`;
  names.add(name);
  if (p.pattern !== '') {
    try {
      new RegExp(p.pattern);
    } catch {
      return 'The pattern is not a valid regular expression.';
    }
  }
  const allowed = splitAllowed(p.allowed);
  if (p.type === 'integer') {
    const bad = allowed.find((v) => !/^-?\d+$/.test(v));
    if (bad !== undefined) return `“${bad}” is not an integer.`;
  }
  if (p.pattern !== '') {
    const re = new RegExp(`^(?:${p.pattern})$`);
    const bad = allowed.find((v) => !re.test(v));
    if (bad !== undefined) return `“${bad}” does not match the pattern.`;
  }
  return null;
}

function bodySchemaError(method: HttpMethod, schema: string): string | null {
  if (schema.trim() === '') return null;
  if (method === 'GET' || method === 'DELETE') return `A ${method} request has no body; leave the schema empty.`;
  try {
    const parsed: unknown = JSON.parse(schema);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      return 'The body schema must be a JSON object (a JSON Schema).';
    }
  } catch {
    return 'The body schema is not valid JSON.';
  }
  return null;
}

/** Returns the errors (empty when the draft can be sent) and the operation to send. */
export function validateOperation(
  d: OperationDraft,
  authorizationIds: readonly string[],
): { errors: OperationErrors; op: OperationView } {
  const errors: OperationErrors = {};
  const name = d.name.trim();
  const urlTemplate = d.urlTemplate.trim();

  if (name === '') errors.name = 'Name the operation, e.g. tracker.create_issue.';
  else if (!OPERATION_NAME.test(name)) errors.name = 'Use lowercase letters, digits, dots, _ and - only.';
  if (!authorizationIds.includes(d.authorizationId)) errors.authorizationId = 'Choose the authorization it acts through.';
  if (!HTTP_METHODS.includes(d.method)) errors.method = 'Choose a method.';

  const urlError = urlTemplateError(urlTemplate);
  if (urlError) errors.urlTemplate = urlError;

  const names = new Set<string>();
  const paramErrors: Record<number, string> = {};
  d.params.forEach((p, i) => {
    const e = paramError(p, names);
    if (e) paramErrors[i] = e;
  });
  if (Object.keys(paramErrors).length > 0) errors.params = paramErrors;

  if (!urlError) {
    const missing = urlPlaceholders(urlTemplate).filter((n) => !names.has(n));
    if (missing.length > 0) {
      errors.urlTemplate = `Add a parameter row for ${missing.map((n) => `{${n}}`).join(', ')}.`;
    }
  }
  const schemaError = bodySchemaError(d.method, d.bodySchema);
  if (schemaError) errors.bodySchema = schemaError;

  const op: OperationView = {
    name,
    authorizationId: d.authorizationId,
    description: d.description.trim(),
    method: d.method,
    urlTemplate,
    params: d.params.map((p) => ({
      name: p.name.trim(),
      type: p.type,
      allowed: splitAllowed(p.allowed),
      pattern: p.pattern,
      required: p.required,
    })),
    bodySchema: d.bodySchema.trim(),
    approval: d.approval,
    readOnly: d.readOnly,
  };
  return { errors, op };
}

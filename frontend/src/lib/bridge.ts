// The bridge to the Go side. Wails v2 binds the Go services of package app
// at window.go.app (VaultService, ApprovalService, …) and its runtime at
// window.runtime. The calls (calls.gen.ts) and the views and forms
// (contract.gen.ts) are generated from the Go side; this module holds what
// they share: reaching a service, turning a rejection into a BackendError,
// and checking every answer against its view's generated description.
import { VIEWS } from './contract.gen';
import type * as V from './contract.gen';
import type { Services } from './calls.gen';

// parseView checks an answer against its view's generated field list and
// copies exactly those fields, so a value the window does not know (a
// state added in Go, a field of the wrong type) is refused, never shown as
// something else.
type ViewName = keyof typeof VIEWS;
type FieldSpec = string | readonly string[];

/** Checks v against the generated description of view name, and copies its fields. */
export function parseView<K extends ViewName>(name: K, v: unknown, what: string = VIEWS[name].what): V.Views[K] {
  if (!isRecord(v)) throw new ProtocolError(what);
  const out: Record<string, unknown> = {};
  for (const [field, spec] of Object.entries(VIEWS[name].fields as Record<string, FieldSpec>)) {
    out[field] = parseField(spec, v[field], what);
  }
  return out as unknown as V.Views[K];
}

/** Checks a list of view name (Go's nil slice is null, read as empty). */
export function parseViews<K extends ViewName>(name: K, v: unknown, what: string = VIEWS[name].what): V.Views[K][] {
  return parseField(`${name}[]`, v, what) as V.Views[K][];
}

function parseField(spec: FieldSpec, v: unknown, what: string): unknown {
  if (typeof spec !== 'string') {
    if (typeof v !== 'string' || !spec.includes(v)) throw new ProtocolError(what);
    return v;
  }
  if (spec.endsWith('?')) {
    spec = spec.slice(0, -1);
    if (v === undefined) return spec.endsWith('[]') ? [] : ({ s: '', n: 0, b: false } as Record<string, unknown>)[spec];
  }
  if (spec.endsWith('[]')) {
    if (v === null) return [];
    if (!Array.isArray(v)) throw new ProtocolError(what);
    const item = spec.slice(0, -2);
    return v.map((x) => parseField(item, x, what));
  }
  switch (spec) {
    case 's':
      if (typeof v !== 'string') throw new ProtocolError(what);
      return v;
    case 'n':
      if (typeof v !== 'number') throw new ProtocolError(what);
      return v;
    case 'b':
      if (typeof v !== 'boolean') throw new ProtocolError(what);
      return v;
  }
  return parseView(spec as ViewName, v, what);
}

export function service<K extends keyof Services>(name: K): Services[K] {
  const s = window.go?.app?.[name];
  if (!s) throw new BackendUnavailableError();
  return s as Services[K];
}

interface WailsRuntime {
  EventsOn(name: string, callback: (...data: unknown[]) => void): (() => void) | void;
  EventsOff(name: string, ...additional: string[]): void;
  BrowserOpenURL?(url: string): void;
  ClipboardSetText?(text: string): Promise<boolean>;
}

declare global {
  interface Window {
    go?: { app?: Partial<Services> };
    runtime?: WailsRuntime;
  }
}

/**
 * BackendError carries text meant for the user: Wails rejects a bound call
 * with the Go error's message, which the adapter chooses to be safe to show.
 */
export class BackendError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackendError';
  }
}

/** The bridge is missing: the page is not running inside Yett. */
export class BackendUnavailableError extends BackendError {
  constructor() {
    super('Yett’s backend is not reachable from this window.');
    this.name = 'BackendUnavailableError';
  }
}

/** The backend answered with something this UI does not understand. */
export class ProtocolError extends BackendError {
  constructor(what: string) {
    super(`Yett’s backend sent ${what} this version of the window does not understand.`);
    this.name = 'ProtocolError';
  }
}


/** True once the Wails bindings are installed in this window. */
export function isConnected(): boolean {
  return Boolean(window.go?.app?.VaultService && window.runtime);
}

/**
 * Resolves once the bindings exist. Wails installs them with a script that
 * runs before ours, so this normally resolves at once; the wait covers the
 * browser dev server, whose bridge connects over a websocket.
 */
export function waitForBackend(timeoutMs = 10_000, pollMs = 50): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const check = () => {
      if (isConnected()) return resolve();
      if (Date.now() - started >= timeoutMs) return reject(new BackendUnavailableError());
      setTimeout(check, pollMs);
    };
    check();
  });
}

function userMessage(err: unknown): string {
  if (typeof err === 'string' && err.trim() !== '') return err;
  if (err instanceof Error && err.message.trim() !== '') return err.message;
  return 'Yett could not complete the request.';
}

export async function call<T>(invoke: () => Promise<T>): Promise<T> {
  try {
    return await invoke();
  } catch (err) {
    if (err instanceof BackendError) throw err;
    throw new BackendError(userMessage(err));
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Listens to one backend event: each payload goes through parse, then to
 * onValue, or to onError when it cannot be understood. Returns the
 * unsubscribe function.
 */
export function subscribe<T>(
  event: string,
  parse: (payload: unknown) => T,
  onValue: (v: T) => void,
  onError: (e: BackendError) => void,
): () => void {
  const runtime = window.runtime;
  if (!runtime) throw new BackendUnavailableError();
  // The Go side numbers every event (app/events.go); the transport may
  // deliver two in the other order, so one older than the last applied is
  // dropped: a state pushed later is never undone by one pushed before it.
  let last = 0;
  const off = runtime.EventsOn(event, (payload: unknown, seq?: unknown) => {
    if (typeof seq === 'number') {
      if (seq <= last) return;
      last = seq;
    }
    let v: T;
    try {
      v = parse(payload);
    } catch (err) {
      onError(err as BackendError);
      return;
    }
    onValue(v);
  });
  // Wails ≥ 2.5 returns a canceller for this one listener; EventsOff would
  // drop every listener of the event, so it is only the fallback.
  return typeof off === 'function' ? off : () => runtime.EventsOff(event);
}

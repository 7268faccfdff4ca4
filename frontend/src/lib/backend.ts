// The only module that talks to the Go side. Wails v2 binds the Go services
// of package app at window.go.app (VaultService, ApprovalService, …) and its
// runtime at window.runtime; everything else in the UI imports typed
// functions from here. The services' methods are typed by what Wails
// generates from the Go side (./wailsjs, checked by the Go test
// TestUIContractIsGenerated), so a renamed method or a changed form fails
// the type check; the views that come back are still checked at run time by
// the parsers below, which narrow Go's strings to the window's unions.
//
// No secret ever comes back through this module: the Go adapter only returns
// redacted views. The one secret going out is NewCredentialForm.secret, and the
// passphrase arguments of Create and Unlock.
import {
  AUTHORIZATION_STATES,
  FLOW_STATES,
  GRANT_FLOWS,
  REVOCATION_STATES,
  REVOKE_STEP_NAMES,
  type AuthorizationState,
  type FlowState,
  type GrantFlow,
  type RevocationState,
  type RevokeStepName,
} from './contract.gen';
import type * as VaultServiceBindings from './wailsjs/go/app/VaultService';
import type * as ApprovalServiceBindings from './wailsjs/go/app/ApprovalService';
import type * as AuditServiceBindings from './wailsjs/go/app/AuditService';
import type * as OAuthServiceBindings from './wailsjs/go/app/OAuthService';
import type * as ConnectServiceBindings from './wailsjs/go/app/ConnectService';
import type * as DesktopServiceBindings from './wailsjs/go/app/DesktopService';
import type * as InventoryServiceBindings from './wailsjs/go/app/InventoryService';
import type * as SSHServiceBindings from './wailsjs/go/app/SSHService';

export type VaultState = 'uninitialised' | 'locked' | 'unlocked' | 'damaged';

export interface VaultStatus {
  state: VaultState;
  epoch: number;
  keyringEnabled: boolean;
  keyringAvailable: boolean;
  keyringNote: string;
  autoLockMinutes: number;
  /** RFC 3339 time at which the idle auto-lock fires, or '' when none is armed. */
  lockDeadline: string;
  /** Why the vault cannot be opened; only meaningful in state 'damaged'. */
  damaged: string;
  /** How long unlock attempts are refused after repeated wrong passphrases. */
  retryAfterMs: number;
  kdf: string;
}

export type CredentialFormat = 'bearer' | 'header' | 'basic';
export type ApprovalMode = 'session' | 'per_call';

export interface CredentialView {
  id: string;
  name: string;
  format: CredentialFormat;
  headerName: string;
  template: string;
  username: string;
  hosts: string[];
  pathPrefixes: string[];
  approval: ApprovalMode;
  createdAt: string;
  /** The last edit or rotation. */
  updatedAt: string;
  /** When the current secret was entered. */
  secretSetAt: string;
  version: number;
  /** Other credentials whose hosts and paths cover some of the same requests. */
  overlapsWith: string[];
}

/** The edit form: everything but the secret (rotateSecret replaces that). */
export type CredentialEditForm = Omit<NewCredentialForm, 'secret'>;

/**
 * Another credential whose bindings meet a candidate's, and who an agent's
 * call to `example` would use: 'candidate' (the one being saved), 'other',
 * 'third' (winnerName) or 'none' (equally specific: refused until narrowed).
 */
export interface BindingOverlap {
  otherId: string;
  otherName: string;
  duplicate: boolean;
  host: string;
  path: string;
  example: string;
  winner: 'candidate' | 'other' | 'third' | 'none';
  winnerName: string;
}

export interface PassphraseChange {
  keyringRewrapped: boolean;
  keyringCleared: boolean;
  status: VaultStatus;
}

export interface BackupExport {
  saved: boolean;
  path: string;
  size: number;
}

export interface BackupChoice {
  chosen: boolean;
  path: string;
  name: string;
  size: number;
  modified: string;
}

export interface NewCredentialForm {
  name: string;
  secret: string;
  format: CredentialFormat;
  headerName: string;
  template: string;
  username: string;
  hosts: string[];
  pathPrefixes: string[];
  approval: ApprovalMode;
}

export const VAULT_STATUS_EVENT = 'vault:status';

/** The bound Go app.VaultService, as Wails generates it (wailsjs/go/app/VaultService.d.ts). */
type VaultServiceBinding = typeof VaultServiceBindings;

interface WailsRuntime {
  EventsOn(name: string, callback: (...data: unknown[]) => void): (() => void) | void;
  EventsOff(name: string, ...additional: string[]): void;
  BrowserOpenURL?(url: string): void;
  ClipboardSetText?(text: string): Promise<boolean>;
}

declare global {
  interface Window {
    go?: { app?: { VaultService?: VaultServiceBinding } };
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

function bound(): { VaultService: VaultServiceBinding } {
  const app = window.go?.app;
  if (!app?.VaultService) throw new BackendUnavailableError();
  return app as { VaultService: VaultServiceBinding };
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

async function call<T>(invoke: () => Promise<T>): Promise<T> {
  try {
    return await invoke();
  } catch (err) {
    if (err instanceof BackendError) throw err;
    throw new BackendError(userMessage(err));
  }
}

const STATES: readonly VaultState[] = ['uninitialised', 'locked', 'unlocked', 'damaged'];

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isStringArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((s) => typeof s === 'string');
}

/**
 * Checks a status payload before any screen renders it: a state this UI does
 * not know must not be shown as one it does.
 */
export function parseVaultStatus(v: unknown): VaultStatus {
  if (
    !isRecord(v) ||
    !STATES.includes(v.state as VaultState) ||
    typeof v.epoch !== 'number' ||
    typeof v.keyringEnabled !== 'boolean' ||
    typeof v.keyringAvailable !== 'boolean' ||
    typeof v.keyringNote !== 'string' ||
    typeof v.autoLockMinutes !== 'number' ||
    typeof v.lockDeadline !== 'string' ||
    typeof v.damaged !== 'string' ||
    typeof v.retryAfterMs !== 'number' ||
    typeof v.kdf !== 'string'
  ) {
    throw new ProtocolError('a vault status');
  }
  return {
    state: v.state as VaultState,
    epoch: v.epoch,
    keyringEnabled: v.keyringEnabled,
    keyringAvailable: v.keyringAvailable,
    keyringNote: v.keyringNote,
    autoLockMinutes: v.autoLockMinutes,
    lockDeadline: v.lockDeadline,
    damaged: v.damaged,
    retryAfterMs: v.retryAfterMs,
    kdf: v.kdf,
  };
}

const FORMATS: readonly CredentialFormat[] = ['bearer', 'header', 'basic'];
const APPROVALS: readonly ApprovalMode[] = ['session', 'per_call'];

/**
 * Copies only the known, non-secret fields of a credential view, so even a
 * backend bug that added a field could not put it on screen.
 */
export function parseCredentialView(v: unknown): CredentialView {
  if (
    !isRecord(v) ||
    typeof v.id !== 'string' ||
    typeof v.name !== 'string' ||
    !FORMATS.includes(v.format as CredentialFormat) ||
    typeof v.headerName !== 'string' ||
    typeof v.template !== 'string' ||
    typeof v.username !== 'string' ||
    !isStringArray(v.hosts) ||
    // Go encodes a nil slice as null.
    !(v.pathPrefixes === null || isStringArray(v.pathPrefixes)) ||
    !APPROVALS.includes(v.approval as ApprovalMode) ||
    typeof v.createdAt !== 'string' ||
    typeof v.updatedAt !== 'string' ||
    typeof v.secretSetAt !== 'string' ||
    typeof v.version !== 'number' ||
    !(v.overlapsWith === null || isStringArray(v.overlapsWith))
  ) {
    throw new ProtocolError('a credential');
  }
  return {
    id: v.id,
    name: v.name,
    format: v.format as CredentialFormat,
    headerName: v.headerName,
    template: v.template,
    username: v.username,
    hosts: [...v.hosts],
    pathPrefixes: v.pathPrefixes === null ? [] : [...(v.pathPrefixes as string[])],
    approval: v.approval as ApprovalMode,
    createdAt: v.createdAt,
    updatedAt: v.updatedAt,
    secretSetAt: v.secretSetAt,
    version: v.version,
    overlapsWith: v.overlapsWith === null ? [] : [...(v.overlapsWith as string[])],
  };
}

export function status(): Promise<VaultStatus> {
  return call(async () => parseVaultStatus(await bound().VaultService.Status()));
}

export function create(passphrase: string, useKeyring: boolean): Promise<VaultStatus> {
  return call(async () => parseVaultStatus(await bound().VaultService.Create(passphrase, useKeyring)));
}

export function unlock(passphrase: string): Promise<VaultStatus> {
  return call(async () => parseVaultStatus(await bound().VaultService.Unlock(passphrase)));
}

export function unlockWithKeyring(): Promise<VaultStatus> {
  return call(async () => parseVaultStatus(await bound().VaultService.UnlockWithKeyring()));
}

export function lock(): Promise<VaultStatus> {
  return call(async () => parseVaultStatus(await bound().VaultService.Lock()));
}

export function setAutoLockMinutes(minutes: number): Promise<VaultStatus> {
  return call(async () => parseVaultStatus(await bound().VaultService.SetAutoLockMinutes(minutes)));
}

export function enableKeyring(on: boolean): Promise<VaultStatus> {
  return call(async () => parseVaultStatus(await bound().VaultService.EnableKeyring(on)));
}

/** Restarts the idle auto-lock timer. Callers throttle it (see activity.ts). */
export function touch(): Promise<void> {
  return call(() => bound().VaultService.Touch());
}

export function listCredentials(): Promise<CredentialView[]> {
  return call(async () => {
    const list = await bound().VaultService.ListCredentials();
    // Go encodes an empty nil slice as null.
    if (list === null) return [];
    if (!Array.isArray(list)) throw new ProtocolError('a credential list');
    return list.map(parseCredentialView);
  });
}

export function addCredential(form: NewCredentialForm): Promise<CredentialView> {
  return call(async () => parseCredentialView(await bound().VaultService.AddCredential(form)));
}

export function removeCredential(id: string): Promise<void> {
  return call(() => bound().VaultService.RemoveCredential(id));
}

/** Edits everything but the secret; version is the one the form was opened on. */
export function updateCredential(id: string, version: number, form: CredentialEditForm): Promise<CredentialView> {
  return call(async () => parseCredentialView(await bound().VaultService.UpdateCredential(id, version, form)));
}

/** Replaces the secret (write-only, like the first one); the version goes up. */
export function rotateSecret(id: string, version: number, secret: string): Promise<CredentialView> {
  return call(async () => parseCredentialView(await bound().VaultService.RotateSecret(id, version, secret)));
}

const WINNERS = ['candidate', 'other', 'third', 'none'] as const;

export function parseBindingOverlap(v: unknown): BindingOverlap {
  const o = pick<BindingOverlap>(
    v,
    {
      otherId: 'string', otherName: 'string', duplicate: 'boolean', host: 'string', path: 'string',
      example: 'string', winner: 'string', winnerName: 'string',
    },
    'a binding overlap',
  );
  if (!(WINNERS as readonly string[]).includes(o.winner)) throw new ProtocolError('a binding overlap');
  return o;
}

/** Which stored credentials these hosts and paths duplicate or overlap (except: the one being edited). */
export function checkBindings(hosts: string[], paths: string[], except = ''): Promise<BindingOverlap[]> {
  return call(async () =>
    list(await bound().VaultService.CheckBindings(hosts, paths, except), 'a binding check').map(parseBindingOverlap),
  );
}

export function changePassphrase(current: string, next: string): Promise<PassphraseChange> {
  return call(async () => {
    // What came over the bridge is checked, not trusted to match its type.
    const v: unknown = await bound().VaultService.ChangePassphrase(current, next);
    const head = pick<Omit<PassphraseChange, 'status'>>(
      v,
      { keyringRewrapped: 'boolean', keyringCleared: 'boolean' },
      'a passphrase change',
    );
    return { ...head, status: parseVaultStatus((v as Record<string, unknown>).status) };
  });
}

/** Asks where to save, then writes an encrypted backup; saved=false when the person cancels. */
export function exportBackup(passphrase: string): Promise<BackupExport> {
  return call(async () =>
    pick<BackupExport>(
      await bound().VaultService.ExportBackup(passphrase),
      { saved: 'boolean', path: 'string', size: 'number' },
      'a backup export',
    ),
  );
}

/** Asks which backup to restore; chosen=false when the person cancels. */
export function chooseBackup(): Promise<BackupChoice> {
  return call(async () =>
    pick<BackupChoice>(
      await bound().VaultService.ChooseBackup(),
      { chosen: 'boolean', path: 'string', name: 'string', size: 'number', modified: 'string' },
      'a backup choice',
    ),
  );
}

/** Replaces the vault's contents with the backup and unlocks it with the backup's passphrase. */
export function restoreBackup(path: string, passphrase: string): Promise<VaultStatus> {
  return call(async () => parseVaultStatus(await bound().VaultService.RestoreBackup(path, passphrase)));
}

/** Stops waiting for the system keyring; the call that waited returns and changes nothing. */
export function cancelKeyringWait(): Promise<void> {
  return call(() => bound().VaultService.CancelKeyringWait());
}

/**
 * Calls onStatus with every status the backend pushes (lock from idle, sleep
 * or screen lock included); onError when a payload cannot be understood.
 * Returns the unsubscribe function.
 */
export function onVaultStatus(
  onStatus: (s: VaultStatus) => void,
  onError: (e: BackendError) => void = () => {},
): () => void {
  return subscribe(VAULT_STATUS_EVENT, parseVaultStatus, onStatus, onError);
}

/**
 * Listens to one backend event: each payload goes through parse, then to
 * onValue, or to onError when it cannot be understood. Returns the
 * unsubscribe function.
 */
function subscribe<T>(
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

// ---- Approvals (app.ApprovalService) ----
// Cards the gateway is waiting on and the session approvals in force. The
// adapter sends redacted views (no command line, no secret); the parsers
// below copy only the known fields, so nothing else can reach the screen.

export type ApprovalKind = 'session' | 'call';

export interface AgentParent {
  name: string;
  pid: number;
}

/** Who asks, from the kernel: never from what the agent says. */
export interface AgentView {
  name: string;
  /** Base name of the running executable. */
  executable: string;
  path: string;
  /** The code signer, or 'unsigned' / 'signature not checked'. */
  signer: string;
  signed: boolean;
  pid: number;
  /** A short prefix of the executable's SHA-256 ("sha256:0123456789ab"). */
  exeHash: string;
  startedAt: string;
  /** Nearest parent first. */
  parents: AgentParent[];
  /** The program that connected for the agent (normally `yett mcp`). */
  via: string;
  /** The `yett mcp` process that connected, and when it started. */
  shimPid: number;
  shimStartedAt: string;
  /** The process that started `yett mcp`: not always the agent. */
  shimParent: AgentProcess;
  /** 'held', 'held-not-parent', 'not-held' or 'not-checked'. */
  stdio: string;
  /** Who holds `yett mcp`'s input and output, in a sentence. */
  stdioText: string;
  /** True only when the agent started `yett mcp` and holds both. */
  stdioOk: boolean;
}

/** A process shown with its start time and (redacted) command line. */
export interface AgentProcess {
  name: string;
  pid: number;
  startedAt: string;
  cmdline: string;
}

export interface ApprovalCard {
  id: string;
  kind: ApprovalKind;
  agent: AgentView;
  /** The broker's reason, e.g. 'agent restarted' (session cards). */
  change: string;
  headline: string;
  /** What Yett knows of this program's other runs, or '' (session cards). */
  detail: string;
  /** What changed and what approving does, in a sentence. */
  sentence: string;
  channel: string;
  /** host[:port] */
  target: string;
  /** Call cards: the HTTP method and path of the one call. */
  method: string;
  path: string;
  /** The credential's name (never its value). */
  credential: string;
  /** Cards about a named operation: its name, and what it does in the person's words. */
  operation: string;
  description: string;
  /** ssh.exec cards: the command exactly as it will run, the start of its input and the input's size. */
  command: string;
  stdin: string;
  stdinBytes: number;
  deadline: string;
  /** Seconds left when the backend sent the card. */
  secondsLeft: number;
  /** What approving covers: this run (until the process exits…) or this call only. */
  scope: string;
  /** Approving waits for the person's system verification (password, fingerprint). */
  verifies: boolean;
}

export interface LiveSession {
  id: string;
  agent: AgentView;
  channel: string;
  approvedAt: string;
  surface: string;
  vaultEpoch: number;
}

export interface ApprovalState {
  cards: ApprovalCard[];
  sessions: LiveSession[];
  /** Recent answers and expiries, newest first. */
  decisions: Decision[];
}

export type DecisionOutcome = 'approved' | 'denied' | 'refused' | 'expired' | 'withdrawn';

/** One recent answer to a card (or its expiry): what, how it ended, who answered where. */
export interface Decision {
  id: string;
  kind: ApprovalKind;
  agent: AgentView;
  change: string;
  channel: string;
  method: string;
  target: string;
  outcome: DecisionOutcome;
  /** Why a withdrawn card went away ("the agent exited"), '' otherwise. */
  why: string;
  /** "in the window", "from a notification", "at the yett serve terminal", or '' (expired, withdrawn). */
  where: string;
  /** The local account that answered. */
  by: string;
  at: string;
}

export const APPROVAL_CHANGED_EVENT = 'approval:changed';

/** The bound Go app.ApprovalService, as Wails generates it (wailsjs/go/app/ApprovalService.d.ts). */
type ApprovalServiceBinding = typeof ApprovalServiceBindings;

function boundApprovals(): { ApprovalService: ApprovalServiceBinding } {
  const app = window.go?.app as { ApprovalService?: ApprovalServiceBinding } | undefined;
  if (!app?.ApprovalService) throw new BackendUnavailableError();
  return app as { ApprovalService: ApprovalServiceBinding };
}

function approvalList(v: unknown, what: string): unknown[] {
  // Go encodes a nil slice as null.
  if (v === null) return [];
  if (!Array.isArray(v)) throw new ProtocolError(what);
  return v;
}

export function parseAgentView(v: unknown): AgentView {
  if (
    !isRecord(v) ||
    typeof v.name !== 'string' ||
    typeof v.executable !== 'string' ||
    typeof v.path !== 'string' ||
    typeof v.signer !== 'string' ||
    typeof v.signed !== 'boolean' ||
    typeof v.pid !== 'number' ||
    typeof v.exeHash !== 'string' ||
    typeof v.startedAt !== 'string' ||
    typeof v.via !== 'string' ||
    typeof v.shimPid !== 'number' ||
    typeof v.shimStartedAt !== 'string' ||
    typeof v.stdio !== 'string' ||
    typeof v.stdioText !== 'string' ||
    typeof v.stdioOk !== 'boolean'
  ) {
    throw new ProtocolError('an agent description');
  }
  const sp = v.shimParent;
  if (
    !isRecord(sp) ||
    typeof sp.name !== 'string' ||
    typeof sp.pid !== 'number' ||
    typeof sp.startedAt !== 'string' ||
    typeof sp.cmdline !== 'string'
  ) {
    throw new ProtocolError('an agent description');
  }
  const parents = approvalList(v.parents, 'an agent description').map((p) => {
    if (!isRecord(p) || typeof p.name !== 'string' || typeof p.pid !== 'number') {
      throw new ProtocolError('an agent description');
    }
    return { name: p.name, pid: p.pid };
  });
  return {
    name: v.name,
    executable: v.executable,
    path: v.path,
    signer: v.signer,
    signed: v.signed,
    pid: v.pid,
    exeHash: v.exeHash,
    startedAt: v.startedAt,
    parents,
    via: v.via,
    shimPid: v.shimPid,
    shimStartedAt: v.shimStartedAt,
    shimParent: { name: sp.name, pid: sp.pid, startedAt: sp.startedAt, cmdline: sp.cmdline },
    stdio: v.stdio,
    stdioText: v.stdioText,
    stdioOk: v.stdioOk,
  };
}

const APPROVAL_KINDS: readonly ApprovalKind[] = ['session', 'call'];

export function parseApprovalCard(v: unknown): ApprovalCard {
  if (
    !isRecord(v) ||
    typeof v.id !== 'string' ||
    !APPROVAL_KINDS.includes(v.kind as ApprovalKind) ||
    typeof v.change !== 'string' ||
    typeof v.headline !== 'string' ||
    typeof v.sentence !== 'string' ||
    typeof v.channel !== 'string' ||
    typeof v.target !== 'string' ||
    typeof v.method !== 'string' ||
    typeof v.path !== 'string' ||
    typeof v.credential !== 'string' ||
    typeof v.deadline !== 'string' ||
    typeof v.secondsLeft !== 'number'
  ) {
    throw new ProtocolError('an approval request');
  }
  return {
    id: v.id,
    kind: v.kind as ApprovalKind,
    agent: parseAgentView(v.agent),
    change: v.change,
    headline: v.headline,
    detail: typeof v.detail === 'string' ? v.detail : '',
    sentence: v.sentence,
    channel: v.channel,
    target: v.target,
    method: v.method,
    path: v.path,
    credential: v.credential,
    operation: typeof v.operation === 'string' ? v.operation : '',
    description: typeof v.description === 'string' ? v.description : '',
    command: typeof v.command === 'string' ? v.command : '',
    stdin: typeof v.stdin === 'string' ? v.stdin : '',
    stdinBytes: typeof v.stdinBytes === 'number' ? v.stdinBytes : 0,
    deadline: v.deadline,
    secondsLeft: v.secondsLeft,
    scope: typeof v.scope === 'string' ? v.scope : '',
    verifies: v.verifies === true,
  };
}

const DECISION_OUTCOMES: readonly DecisionOutcome[] = ['approved', 'denied', 'refused', 'expired', 'withdrawn'];

export function parseDecision(v: unknown): Decision {
  if (
    !isRecord(v) ||
    typeof v.id !== 'string' ||
    !APPROVAL_KINDS.includes(v.kind as ApprovalKind) ||
    typeof v.change !== 'string' ||
    typeof v.channel !== 'string' ||
    typeof v.method !== 'string' ||
    typeof v.target !== 'string' ||
    !DECISION_OUTCOMES.includes(v.outcome as DecisionOutcome) ||
    typeof v.where !== 'string' ||
    typeof v.by !== 'string' ||
    typeof v.at !== 'string'
  ) {
    throw new ProtocolError('a recent decision');
  }
  return {
    id: v.id,
    kind: v.kind as ApprovalKind,
    agent: parseAgentView(v.agent),
    change: v.change,
    channel: v.channel,
    method: v.method,
    target: v.target,
    outcome: v.outcome as DecisionOutcome,
    why: typeof v.why === 'string' ? v.why : '',
    where: v.where,
    by: v.by,
    at: v.at,
  };
}

export function parseLiveSession(v: unknown): LiveSession {
  if (
    !isRecord(v) ||
    typeof v.id !== 'string' ||
    typeof v.channel !== 'string' ||
    typeof v.approvedAt !== 'string' ||
    typeof v.surface !== 'string' ||
    typeof v.vaultEpoch !== 'number'
  ) {
    throw new ProtocolError('a live session');
  }
  return {
    id: v.id,
    agent: parseAgentView(v.agent),
    channel: v.channel,
    approvedAt: v.approvedAt,
    surface: v.surface,
    vaultEpoch: v.vaultEpoch,
  };
}

export function parseApprovalState(v: unknown): ApprovalState {
  if (!isRecord(v)) throw new ProtocolError('an approval update');
  return {
    cards: approvalList(v.cards, 'an approval update').map(parseApprovalCard),
    sessions: approvalList(v.sessions, 'an approval update').map(parseLiveSession),
    decisions: approvalList(v.decisions ?? null, 'an approval update').map(parseDecision),
  };
}

export function pendingApprovals(): Promise<ApprovalCard[]> {
  return call(async () =>
    approvalList(await boundApprovals().ApprovalService.Pending(), 'an approval list').map(parseApprovalCard),
  );
}

/** Approves or denies a card; the card leaves when the backend says so. */
export function answerApproval(id: string, approve: boolean): Promise<void> {
  return call(() => boundApprovals().ApprovalService.Answer(id, approve));
}

export function liveSessions(): Promise<LiveSession[]> {
  return call(async () =>
    approvalList(await boundApprovals().ApprovalService.Sessions(), 'a session list').map(parseLiveSession),
  );
}

/** The recent answers and expiries of this run of Yett, newest first. */
export function recentDecisions(): Promise<Decision[]> {
  return call(async () =>
    approvalList(await boundApprovals().ApprovalService.Decisions(), 'a decision list').map(parseDecision),
  );
}

export function revokeSession(sessionId: string): Promise<void> {
  return call(() => boundApprovals().ApprovalService.Revoke(sessionId));
}

/**
 * Calls onState with the whole approval state every time a card appears or
 * is withdrawn, or a session starts or ends; onError when a payload cannot
 * be understood. Returns the unsubscribe function.
 */
export function onApprovalChanged(
  onState: (s: ApprovalState) => void,
  onError: (e: BackendError) => void = () => {},
): () => void {
  return subscribe(APPROVAL_CHANGED_EVENT, parseApprovalState, onState, onError);
}

// ---- Audit log (app.AuditService) ----
// The Sessions and Activity views are projections of the decrypted audit
// log; the status is its offline verification. None of it carries a secret:
// audit events have no field for one, and the parsers below copy only the
// known fields.

/**
 * 'verifying': the first verification since the app started is still running
 * (on a long log it takes seconds); the app records meanwhile and the state
 * changes (with an audit:changed event) when it is done.
 */
export type AuditState = 'verifying' | 'intact' | 'tampered' | 'unreadable' | 'absent';

export interface AuditStatus {
  state: AuditState;
  /** The app holds the log open and records vault lock and unlock. */
  writing: boolean;
  /** Why the app is not recording; '' when it records normally. */
  problem: string;
  entries: number;
  treeHead: string;
  signedSize: number;
  firstBad: number;
  reason: string;
  torn: string;
  notes: string[];
}

export interface LoggedSession {
  id: string;
  executable: string;
  pid: number;
  exeSha256: string;
  signer: string;
  bootId: string;
  vaultEpoch: number;
  approvedAt: string;
  approvedBy: string;
  surface: string;
  ended: boolean;
  endedAt: string;
  endReason: string;
  endInferred: boolean;
  calls: number;
}

/** One page of a view, newest first: what comes before the log index `before` (0: from the newest), at most `limit` (0: 100). */
export interface PageRequest {
  before: number;
  limit: number;
}

/** More older entries exist when `more`; `next` is the `before` of the page that holds them. */
export interface SessionsView {
  readable: boolean;
  note: string;
  sessions: LoggedSession[];
  more: boolean;
  next: number;
}

export interface ActivityFilter extends PageRequest {
  sessionId: string;
  channel: string;
  class: string;
  /** RFC 3339, or '' for no bound. */
  from: string;
  to: string;
}

export interface ActivityItem {
  kind: 'call' | 'authority';
  index: number;
  time: string;
  type: string;
  sessionId: string;
  reason: string;
  vaultEpoch: number;
  requestId: string;
  channel: string;
  operation: string;
  target: string;
  state: string;
  class: string;
  status: number;
  bytes: number;
  durationMs: number;
  /** A call's path, without its query. */
  path: string;
  /** The credential (or OAuth authorization) a call used, or a credential event is about: an id. */
  credentialRef: string;
  /** A credential event's credential name, as it was then. */
  credentialName: string;
  /** OAuth custody and drill entries: the step, its outcome ('ok', 'failed' or ''), the error code, the authorization and the drill. */
  step: string;
  outcome: string;
  code: string;
  authorizationId: string;
  drillId: string;
  drillKind: string;
  /** A call of Yett's own revocation drill client, not an agent's. */
  drill: boolean;
}

export interface ActivityView {
  readable: boolean;
  note: string;
  items: ActivityItem[];
  more: boolean;
  next: number;
}

export interface CheckpointExport {
  saved: boolean;
  path: string;
  size: number;
  treeHead: string;
}

export const AUDIT_CHANGED_EVENT = 'audit:changed';

/** The bound Go app.AuditService, as Wails generates it (wailsjs/go/app/AuditService.d.ts). */
type AuditServiceBinding = typeof AuditServiceBindings;

function boundAudit(): { AuditService: AuditServiceBinding } {
  const app = window.go?.app as { AuditService?: AuditServiceBinding } | undefined;
  if (!app?.AuditService) throw new BackendUnavailableError();
  return app as { AuditService: AuditServiceBinding };
}

type FieldType = 'string' | 'number' | 'boolean';

/** Copies exactly the named fields, each of the given type, or throws. */
function pick<T>(v: unknown, fields: Record<string, FieldType>, what: string): T {
  if (!isRecord(v)) throw new ProtocolError(what);
  const out: Record<string, unknown> = {};
  for (const [name, type] of Object.entries(fields)) {
    if (typeof v[name] !== type) throw new ProtocolError(what);
    out[name] = v[name];
  }
  return out as T;
}

function list(v: unknown, what: string): unknown[] {
  // Go encodes a nil slice as null.
  if (v === null) return [];
  if (!Array.isArray(v)) throw new ProtocolError(what);
  return v;
}

const AUDIT_STATES: readonly AuditState[] = ['verifying', 'intact', 'tampered', 'unreadable', 'absent'];

export function parseAuditStatus(v: unknown): AuditStatus {
  const s = pick<Omit<AuditStatus, 'notes'>>(
    v,
    {
      state: 'string', writing: 'boolean', problem: 'string', entries: 'number', treeHead: 'string',
      signedSize: 'number', firstBad: 'number', reason: 'string', torn: 'string',
    },
    'an audit status',
  );
  const notes = list((v as Record<string, unknown>).notes, 'an audit status');
  if (!AUDIT_STATES.includes(s.state) || !isStringArray(notes)) throw new ProtocolError('an audit status');
  return { ...s, notes: [...notes] };
}

type ViewHead = { readable: boolean; note: string; more: boolean; next: number };
const VIEW_HEAD: Record<string, FieldType> = { readable: 'boolean', note: 'string', more: 'boolean', next: 'number' };

export function parseSessionsView(v: unknown): SessionsView {
  const head = pick<ViewHead>(v, VIEW_HEAD, 'a sessions view');
  const sessions = list((v as Record<string, unknown>).sessions, 'a sessions view').map((s) =>
    pick<LoggedSession>(
      s,
      {
        id: 'string', executable: 'string', pid: 'number', exeSha256: 'string', signer: 'string', bootId: 'string',
        vaultEpoch: 'number', approvedAt: 'string', approvedBy: 'string', surface: 'string', ended: 'boolean',
        endedAt: 'string', endReason: 'string', endInferred: 'boolean', calls: 'number',
      },
      'a session',
    ),
  );
  return { ...head, sessions };
}

export function parseActivityView(v: unknown): ActivityView {
  const head = pick<ViewHead>(v, VIEW_HEAD, 'an activity view');
  const items = list((v as Record<string, unknown>).items, 'an activity view').map((it) => {
    const item = pick<ActivityItem>(
      it,
      {
        kind: 'string', index: 'number', time: 'string', type: 'string', sessionId: 'string', reason: 'string',
        vaultEpoch: 'number', requestId: 'string', channel: 'string', operation: 'string', target: 'string',
        state: 'string', class: 'string', status: 'number', bytes: 'number', durationMs: 'number',
        path: 'string', credentialRef: 'string', credentialName: 'string', step: 'string', outcome: 'string',
        code: 'string', authorizationId: 'string', drillId: 'string', drillKind: 'string', drill: 'boolean',
      },
      'an activity item',
    );
    if (item.kind !== 'call' && item.kind !== 'authority') throw new ProtocolError('an activity item');
    return item;
  });
  return { ...head, items };
}

export function auditStatus(): Promise<AuditStatus> {
  return call(async () => parseAuditStatus(await boundAudit().AuditService.Status()));
}

/** The page size the views ask for, and the most a reload asks for at once. */
export const AUDIT_PAGE = 100;
export const AUDIT_MAX_PAGE = 1000;

export function loggedSessions(page: PageRequest = { before: 0, limit: AUDIT_PAGE }): Promise<SessionsView> {
  return call(async () => parseSessionsView(await boundAudit().AuditService.Sessions(page)));
}

export function activity(filter: ActivityFilter): Promise<ActivityView> {
  return call(async () => parseActivityView(await boundAudit().AuditService.Activity(filter)));
}

/** Opens a save dialog; resolves with saved=false if the person cancels. */
export function exportCheckpoint(): Promise<CheckpointExport> {
  return call(async () =>
    pick<CheckpointExport>(
      await boundAudit().AuditService.ExportCheckpoint(),
      { saved: 'boolean', path: 'string', size: 'number', treeHead: 'string' },
      'a checkpoint export',
    ),
  );
}

/** Calls onChange when the audit log grew (throttled by the backend). */
export function onAuditChanged(onChange: () => void): () => void {
  // The payload (the new record count) is not needed: listeners re-read.
  return subscribe(AUDIT_CHANGED_EVENT, () => undefined, () => onChange(), () => {});
}

// ---- OAuth connections (app.OAuthService) ----
// Authorizations a person connected, the flows that connect them, and the
// named operations agents may call through them. No token ever comes back:
// the adapter sends inventory views, and the parsers below copy only the
// known fields, so even a backend bug could not put a token on screen. The
// one secret going out is ConnectForm.clientSecret.

export type OAuthProvider = 'github' | 'google' | 'gitlab' | 'microsoft' | 'slack' | 'atlassian' | 'custom';
export type ClientAuth = 'none' | 'client_secret' | 'private_key_jwt';
export type Environment = 'development' | 'staging' | 'production';
// The closed sets of states come from the Go side (contract.gen.ts).
export type { GrantFlow, FlowState, AuthorizationState, RevocationState, RevokeStepName };
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type ParamType = 'string' | 'integer';

export interface PresetView {
  id: string;
  name: string;
  defaultScopes: string[];
  tenant: boolean;
  notes: string;
  hasDevice: boolean;
  hasRevocation: boolean;
  /** Where the provider's API is: its accounts' operations may send their tokens only there. */
  apiHosts: string[];
}

export interface DiscoveryView {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  revocationEndpoint: string;
  introspectionEndpoint: string;
  deviceAuthorizationEndpoint: string;
  scopesSupported: string[];
  dpop: boolean;
  authMethods: string[];
}

/** A public key to register with the provider; the private half stays in the vault. */
export interface ClientKeyView {
  keyId: string;
  publicJwk: string;
  jwks: string;
}

export interface ConnectForm {
  name: string;
  provider: OAuthProvider;
  tenant: string;
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  revocationEndpoint: string;
  introspectionEndpoint: string;
  deviceAuthorizationEndpoint: string;
  clientId: string;
  clientAuth: ClientAuth;
  /** Write-only: it never comes back. */
  clientSecret: string;
  clientKeyId: string;
  scopes: string[];
  environment: Environment;
  unattended: boolean;
  flow: GrantFlow;
  owner: string;
  backupRevoker: string;
  /** YYYY-MM-DD, or '' for none. */
  reviewBy: string;
  disableProcedure: string;
  dpop: boolean;
  /** Hosts of the account's API, where its operations may send its token; [] for the preset's or the provider's own. */
  apiHosts?: string[];
}

export interface FlowView {
  flowId: string;
  flow: GrantFlow;
  state: FlowState;
  authorizationUrl: string;
  userCode: string;
  verificationUri: string;
  verificationUriComplete: string;
  /** RFC 3339. */
  expiresAt: string;
  authorizationId: string;
  error: string;
}

export interface AuthorizationView {
  id: string;
  name: string;
  provider: string;
  providerHost: string;
  accountRef: string;
  scopes: string[];
  owner: string;
  backupRevoker: string;
  environment: string;
  createdHow: GrantFlow;
  connectedAt: string;
  lastRefresh: string;
  lastUsed: string;
  /** RFC 3339, or '' for none. */
  reviewBy: string;
  disableProcedure: string;
  operations: string[];
  state: AuthorizationState;
  /** Why it needs reconnection (invalid_grant, response_lost, vault_reset, ...), or ''. */
  stateReason: string;
  revocation: RevocationState;
  unattended: boolean;
  dpop: boolean;
  clientAuth: string;
  controlled: boolean;
  /** Sentences for a person, e.g. "no backup revoker". */
  problems: string[];
  /** Where its operations may send its token. */
  apiHosts: string[];
  /** Where it is revoked (RFC 7009) and verified (RFC 7662) at the provider; '' for none. */
  revocationEndpoint: string;
  introspectionEndpoint: string;
  /** Its tokens still waiting to be revoked at the provider. */
  waitingRevocations: number;
}

export interface InventoryUpdate {
  owner: string;
  backupRevoker: string;
  /** YYYY-MM-DD, or '' for none. */
  reviewBy: string;
  disableProcedure: string;
}

export interface RevokeStep {
  step: RevokeStepName;
  ok: boolean;
  detail: string;
  at: string;
  /** The provider gave no way to check this step (no introspection endpoint). */
  unverified: boolean;
}

export interface RevokeReport {
  authorizationId: string;
  steps: RevokeStep[];
  /** The provider could not be reached; Yett retries. */
  retryPending: boolean;
}

export interface OperationParam {
  name: string;
  type: ParamType;
  /** Empty: any value that matches pattern. */
  allowed: string[];
  pattern: string;
  required: boolean;
}

export interface OperationView {
  name: string;
  authorizationId: string;
  description: string;
  method: HttpMethod;
  urlTemplate: string;
  params: OperationParam[];
  /** JSON Schema text, or ''. */
  bodySchema: string;
  approval: ApprovalMode;
}

export interface OAuthSettings {
  blockUncontrolled: boolean;
}

export const OAUTH_CHANGED_EVENT = 'oauth:changed';
export const OAUTH_FLOW_EVENT = 'oauth:flow';

/** The bound Go app.OAuthService, as Wails generates it (wailsjs/go/app/OAuthService.d.ts). */
type OAuthServiceBinding = typeof OAuthServiceBindings;

function boundOAuth(): { OAuthService: OAuthServiceBinding } {
  const app = window.go?.app as { OAuthService?: OAuthServiceBinding } | undefined;
  if (!app?.OAuthService) throw new BackendUnavailableError();
  return app as { OAuthService: OAuthServiceBinding };
}

function oneOf<T extends string>(v: unknown, allowed: readonly T[], what: string): T {
  if (!allowed.includes(v as T)) throw new ProtocolError(what);
  return v as T;
}

function strings(v: unknown, what: string): string[] {
  const l = list(v, what);
  if (!isStringArray(l)) throw new ProtocolError(what);
  return [...l];
}

export const HTTP_METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const PARAM_TYPES: readonly ParamType[] = ['string', 'integer'];

export function parsePresetView(v: unknown): PresetView {
  const p = pick<Omit<PresetView, 'defaultScopes'>>(
    v,
    { id: 'string', name: 'string', tenant: 'boolean', notes: 'string', hasDevice: 'boolean', hasRevocation: 'boolean' },
    'a provider preset',
  );
  const r = v as Record<string, unknown>;
  return {
    ...p,
    defaultScopes: strings(r.defaultScopes, 'a provider preset'),
    apiHosts: strings(r.apiHosts, 'a provider preset'),
  };
}

export function parseDiscoveryView(v: unknown): DiscoveryView {
  const what = 'a discovery result';
  const d = pick<Omit<DiscoveryView, 'scopesSupported' | 'authMethods'>>(
    v,
    {
      issuer: 'string', authorizationEndpoint: 'string', tokenEndpoint: 'string', revocationEndpoint: 'string',
      introspectionEndpoint: 'string', deviceAuthorizationEndpoint: 'string', dpop: 'boolean',
    },
    what,
  );
  const r = v as Record<string, unknown>;
  return { ...d, scopesSupported: strings(r.scopesSupported, what), authMethods: strings(r.authMethods, what) };
}

export function parseClientKeyView(v: unknown): ClientKeyView {
  return pick<ClientKeyView>(v, { keyId: 'string', publicJwk: 'string', jwks: 'string' }, 'a client key');
}

export function parseFlowView(v: unknown): FlowView {
  const what = 'a connection flow';
  const f = pick<FlowView>(
    v,
    {
      flowId: 'string', flow: 'string', state: 'string', authorizationUrl: 'string', userCode: 'string',
      verificationUri: 'string', verificationUriComplete: 'string', expiresAt: 'string', authorizationId: 'string',
      error: 'string',
    },
    what,
  );
  oneOf(f.flow, GRANT_FLOWS, what);
  oneOf(f.state, FLOW_STATES, what);
  return f;
}

export function parseAuthorizationView(v: unknown): AuthorizationView {
  const what = 'an authorization';
  const a = pick<Omit<AuthorizationView, 'scopes' | 'operations' | 'problems' | 'apiHosts'>>(
    v,
    {
      id: 'string', name: 'string', provider: 'string', providerHost: 'string', accountRef: 'string', owner: 'string',
      backupRevoker: 'string', environment: 'string', createdHow: 'string', connectedAt: 'string',
      lastRefresh: 'string', lastUsed: 'string', reviewBy: 'string', disableProcedure: 'string', state: 'string',
      stateReason: 'string', revocation: 'string', unattended: 'boolean', dpop: 'boolean', clientAuth: 'string', controlled: 'boolean',
      revocationEndpoint: 'string', introspectionEndpoint: 'string', waitingRevocations: 'number',
    },
    what,
  );
  oneOf(a.createdHow, GRANT_FLOWS, what);
  oneOf(a.state, AUTHORIZATION_STATES, what);
  oneOf(a.revocation, REVOCATION_STATES, what);
  const r = v as Record<string, unknown>;
  return {
    ...a,
    scopes: strings(r.scopes, what),
    operations: strings(r.operations, what),
    problems: strings(r.problems, what),
    apiHosts: strings(r.apiHosts, what),
  };
}

export function parseRevokeReport(v: unknown): RevokeReport {
  const what = 'a revocation report';
  const head = pick<{ authorizationId: string; retryPending: boolean }>(
    v,
    { authorizationId: 'string', retryPending: 'boolean' },
    what,
  );
  const steps = list((v as Record<string, unknown>).steps, what).map((s) => {
    const step = pick<RevokeStep>(s, { step: 'string', ok: 'boolean', detail: 'string', at: 'string', unverified: 'boolean' }, what);
    oneOf(step.step, REVOKE_STEP_NAMES, what);
    return step;
  });
  return { ...head, steps };
}

export function parseOperationView(v: unknown): OperationView {
  const what = 'a named operation';
  const op = pick<Omit<OperationView, 'params'>>(
    v,
    {
      name: 'string', authorizationId: 'string', description: 'string', method: 'string', urlTemplate: 'string',
      bodySchema: 'string', approval: 'string',
    },
    what,
  );
  oneOf(op.method, HTTP_METHODS, what);
  oneOf(op.approval, APPROVALS, what);
  const params = list((v as Record<string, unknown>).params, what).map((p) => {
    const param = pick<Omit<OperationParam, 'allowed'>>(
      p,
      { name: 'string', type: 'string', pattern: 'string', required: 'boolean' },
      what,
    );
    oneOf(param.type, PARAM_TYPES, what);
    return { ...param, allowed: strings((p as Record<string, unknown>).allowed, what) };
  });
  return { ...op, params };
}

export function oauthPresets(): Promise<PresetView[]> {
  return call(async () => list(await boundOAuth().OAuthService.Presets(), 'a preset list').map(parsePresetView));
}

/** Reads the issuer's metadata (RFC 8414 / OpenID discovery). */
export function discoverIssuer(issuer: string): Promise<DiscoveryView> {
  return call(async () => parseDiscoveryView(await boundOAuth().OAuthService.Discover(issuer)));
}

/** Makes a key pair for private_key_jwt and returns only its public half. */
export function newClientKey(): Promise<ClientKeyView> {
  return call(async () => parseClientKeyView(await boundOAuth().OAuthService.NewClientKey()));
}

/** Starts a connection; for authorization_code the backend opens the browser once. */
export function connectOAuth(form: ConnectForm): Promise<FlowView> {
  return call(async () => parseFlowView(await boundOAuth().OAuthService.Connect(form)));
}

export function reconnectOAuth(id: string): Promise<FlowView> {
  return call(async () => parseFlowView(await boundOAuth().OAuthService.Reconnect(id)));
}

export function oauthFlow(flowId: string): Promise<FlowView> {
  return call(async () => parseFlowView(await boundOAuth().OAuthService.Flow(flowId)));
}

export function cancelOAuthFlow(flowId: string): Promise<void> {
  return call(() => boundOAuth().OAuthService.CancelFlow(flowId));
}

export function oauthAuthorizations(): Promise<AuthorizationView[]> {
  return call(async () =>
    list(await boundOAuth().OAuthService.Authorizations(), 'an authorization list').map(parseAuthorizationView),
  );
}

export function updateInventory(id: string, inv: InventoryUpdate): Promise<void> {
  return call(() => boundOAuth().OAuthService.UpdateInventory(id, inv));
}

/** Disables locally, revokes at the provider, then verifies; reports each step. */
export function revokeAuthorization(id: string): Promise<RevokeReport> {
  return call(async () => parseRevokeReport(await boundOAuth().OAuthService.Revoke(id)));
}

/** Sets where an authorization is revoked and verified at its provider ('' removes one). */
export function setAuthorizationEndpoints(id: string, revocation: string, introspection: string): Promise<void> {
  return call(() => boundOAuth().OAuthService.SetEndpoints(id, revocation, introspection));
}

/** Switches a suspended authorization back on. */
export function resumeAuthorization(id: string): Promise<void> {
  return call(() => boundOAuth().OAuthService.Resume(id));
}

export function oauthOperations(): Promise<OperationView[]> {
  return call(async () =>
    list(await boundOAuth().OAuthService.Operations(), 'an operation list').map(parseOperationView),
  );
}

export function saveOperation(op: OperationView): Promise<void> {
  return call(() => boundOAuth().OAuthService.SaveOperation(op));
}

export function removeOperation(name: string): Promise<void> {
  return call(() => boundOAuth().OAuthService.RemoveOperation(name));
}

export function oauthSettings(): Promise<OAuthSettings> {
  return call(async () =>
    pick<OAuthSettings>(await boundOAuth().OAuthService.Settings(), { blockUncontrolled: 'boolean' }, 'OAuth settings'),
  );
}

export function setBlockUncontrolled(on: boolean): Promise<void> {
  return call(() => boundOAuth().OAuthService.SetBlockUncontrolled(on));
}

/** Calls onChange when authorizations or operations changed: listeners re-read. */
export function onOAuthChanged(onChange: () => void): () => void {
  return subscribe(OAUTH_CHANGED_EVENT, () => undefined, () => onChange(), () => {});
}

/** Calls onFlow with every flow update the backend pushes. */
export function onOAuthFlow(
  onFlow: (f: FlowView) => void,
  onError: (e: BackendError) => void = () => {},
): () => void {
  return subscribe(OAUTH_FLOW_EVENT, parseFlowView, onFlow, onError);
}

/** Opens an https URL in the system browser, never inside Yett's window. */
export function openExternal(url: string): void {
  if (!/^https:\/\//i.test(url)) throw new BackendError('Yett opens only https addresses in the browser.');
  const runtime = window.runtime;
  if (!runtime?.BrowserOpenURL) throw new BackendUnavailableError();
  runtime.BrowserOpenURL(url);
}

/** Puts text (never a secret: a URL, a code, a public key) on the clipboard. */
export async function copyText(text: string): Promise<void> {
  const runtime = window.runtime;
  if (runtime?.ClipboardSetText) {
    if (await runtime.ClipboardSetText(text)) return;
    throw new BackendError('Yett could not copy to the clipboard; select the text and copy it instead.');
  }
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    throw new BackendError('Yett could not copy to the clipboard; select the text and copy it instead.');
  }
}

// ---- Connecting agents (app.ConnectService) ----
// What the "Connect an agent" page shows: the commands that add Yett to an
// MCP client, with the real path of the yett command this app runs with.

export interface ClientSetup {
  id: string;
  name: string;
  /** One line to paste in a terminal. */
  command: string;
  /** The configuration it writes, for doing it by hand. */
  config: string;
  configFile: string;
}

export interface ConnectInfo {
  cliPath: string;
  cliFound: boolean;
  /** The gateway accepts agents now; problem says why not. */
  listening: boolean;
  problem: string;
  /** This computer's user name. */
  user: string;
  clients: ClientSetup[];
}

/** The bound Go app.ConnectService, as Wails generates it (wailsjs/go/app/ConnectService.d.ts). */
type ConnectServiceBinding = typeof ConnectServiceBindings;

function boundConnect(): { ConnectService: ConnectServiceBinding } {
  const app = window.go?.app as { ConnectService?: ConnectServiceBinding } | undefined;
  if (!app?.ConnectService) throw new BackendUnavailableError();
  return app as { ConnectService: ConnectServiceBinding };
}

export function parseConnectInfo(v: unknown): ConnectInfo {
  const what = 'the agent setup';
  const head = pick<Omit<ConnectInfo, 'clients'>>(
    v,
    { cliPath: 'string', cliFound: 'boolean', listening: 'boolean', problem: 'string', user: 'string' },
    what,
  );
  const clients = list((v as Record<string, unknown>).clients, what).map((c) =>
    pick<ClientSetup>(c, { id: 'string', name: 'string', command: 'string', config: 'string', configFile: 'string' }, what),
  );
  return { ...head, clients };
}

export function connectInfo(): Promise<ConnectInfo> {
  return call(async () => parseConnectInfo(await boundConnect().ConnectService.Info()));
}

// ---- Yett in the background (app.DesktopService) ----
// Closing the window keeps Yett running; quitting is explicit. Approval
// cards reach the person as native notifications, within a policy the
// backend enforces (this module only reads and stores the choice).

export interface NotificationStatus {
  available: boolean;
  /** Notifications carry Approve and Deny. */
  actions: boolean;
  server: string;
  /** Why notifications (or their buttons) are not available; '' when they are. */
  problem: string;
}

export interface NotificationPolicy {
  sessionCards: boolean;
  callCards: boolean;
  /** Refs of the credentials and operations whose per-call cards are answered only in the window. */
  windowOnly: string[];
}

export interface SensitiveChoice {
  ref: string;
  kind: 'credential' | 'operation';
  name: string;
  detail: string;
}

export type VerificationMode = 'every' | 'sensitive' | 'never';

/** When Yett asks the system to confirm it is the person before an approval takes effect. */
export interface VerificationSettings {
  mode: VerificationMode;
  /** Why the default on this desktop is what it is. */
  why: string;
  available: boolean;
  problem: string;
  /** The vault is unlocked: the choice is sealed in it. */
  editable: boolean;
}

/** Whether the server showing notifications now is trusted with Approve and Deny. */
export interface NotificationServerStatus {
  /** The server that owns the name now: product, bus name, pid and program; '' for none. */
  current: string;
  /** Its bus name, what acceptNotificationServer takes. */
  name: string;
  trusted: boolean;
  /** Why it is not trusted ('' when it is). */
  why: string;
}

export interface DesktopSettings {
  autostart: boolean;
  autostartAvailable: boolean;
  autostartWhere: string;
  autostartProblem: string;
  notifications: NotificationStatus;
  policy: NotificationPolicy;
  sensitive: SensitiveChoice[];
  verification: VerificationSettings;
  notificationServer: NotificationServerStatus;
}

export const DESKTOP_CHANGED_EVENT = 'desktop:changed';
export const SHOW_CARD_EVENT = 'app:show-card';
export const CLOSE_REQUESTED_EVENT = 'app:close-requested';

/** The bound Go app.DesktopService, as Wails generates it (wailsjs/go/app/DesktopService.d.ts). */
type DesktopServiceBinding = typeof DesktopServiceBindings;

function boundDesktop(): { DesktopService: DesktopServiceBinding } {
  const app = window.go?.app as { DesktopService?: DesktopServiceBinding } | undefined;
  if (!app?.DesktopService) throw new BackendUnavailableError();
  return app as { DesktopService: DesktopServiceBinding };
}

const SENSITIVE_KINDS: readonly SensitiveChoice['kind'][] = ['credential', 'operation'];

export function parseDesktopSettings(v: unknown): DesktopSettings {
  const what = 'the background and notification settings';
  const head = pick<Omit<DesktopSettings, 'notifications' | 'policy' | 'sensitive' | 'verification' | 'notificationServer'>>(
    v,
    { autostart: 'boolean', autostartAvailable: 'boolean', autostartWhere: 'string', autostartProblem: 'string' },
    what,
  );
  const r = v as Record<string, unknown>;
  const notifications = pick<NotificationStatus>(
    r.notifications,
    { available: 'boolean', actions: 'boolean', server: 'string', problem: 'string' },
    what,
  );
  const policyHead = pick<Omit<NotificationPolicy, 'windowOnly'>>(r.policy, { sessionCards: 'boolean', callCards: 'boolean' }, what);
  const windowOnly = strings((r.policy as Record<string, unknown>).windowOnly, what);
  const sensitive = list(r.sensitive, what).map((c) => {
    const choice = pick<SensitiveChoice>(c, { ref: 'string', kind: 'string', name: 'string', detail: 'string' }, what);
    oneOf(choice.kind, SENSITIVE_KINDS, what);
    return choice;
  });
  const verification = pick<VerificationSettings>(
    r.verification,
    { mode: 'string', why: 'string', available: 'boolean', problem: 'string', editable: 'boolean' },
    what,
  );
  oneOf(verification.mode, VERIFICATION_MODES, what);
  const notificationServer = pick<NotificationServerStatus>(
    r.notificationServer,
    { current: 'string', name: 'string', trusted: 'boolean', why: 'string' },
    what,
  );
  return { ...head, notifications, policy: { ...policyHead, windowOnly }, sensitive, verification, notificationServer };
}

/** Trusts the notification server Settings shows (by bus name); the system may ask to confirm it is you. */
export function acceptNotificationServer(name: string): Promise<DesktopSettings> {
  return call(async () => parseDesktopSettings(await boundDesktop().DesktopService.AcceptNotificationServer(name)));
}

const VERIFICATION_MODES: readonly VerificationMode[] = ['every', 'sensitive', 'never'];

/** Chooses when Yett asks the system to confirm it is the person (sealed in the vault). */
export function setVerification(mode: VerificationMode): Promise<DesktopSettings> {
  return call(async () => parseDesktopSettings(await boundDesktop().DesktopService.SetVerification(mode)));
}

export function desktopSettings(): Promise<DesktopSettings> {
  return call(async () => parseDesktopSettings(await boundDesktop().DesktopService.Settings()));
}

/** Turns "Start Yett when I log in" on or off. */
export function setAutostart(on: boolean): Promise<DesktopSettings> {
  return call(async () => parseDesktopSettings(await boundDesktop().DesktopService.SetAutostart(on)));
}

/** Stores which cards a notification may answer; the backend enforces it. */
export function setNotificationPolicy(p: NotificationPolicy): Promise<DesktopSettings> {
  return call(async () => parseDesktopSettings(await boundDesktop().DesktopService.SetNotificationPolicy(p)));
}

/** Hides the window; Yett keeps serving agents and answering through notifications. */
export function keepRunningInBackground(): Promise<void> {
  return call(() => boundDesktop().DesktopService.KeepRunningInBackground());
}

/** Quits Yett: the vault locks, waiting agents are refused, the gateway stops. */
export function quitYett(): Promise<void> {
  return call(() => boundDesktop().DesktopService.Quit());
}

export function onDesktopChanged(onSettings: (s: DesktopSettings) => void): () => void {
  return subscribe(DESKTOP_CHANGED_EVENT, parseDesktopSettings, onSettings, () => {});
}

/** Calls onShow with a card id ('' for the oldest waiting) the window must bring into view. */
export function onShowCard(onShow: (id: string) => void): () => void {
  return subscribe(
    SHOW_CARD_EVENT,
    (v) => (isRecord(v) && typeof v.id === 'string' ? v.id : ''),
    onShow,
    () => {},
  );
}

/** Calls onClose when the window was closed for the first time. */
export function onCloseRequested(onClose: () => void): () => void {
  return subscribe(CLOSE_REQUESTED_EVENT, () => undefined, () => onClose(), () => {});
}

// ---- Owner inventory and revocation drills (app.InventoryService) ----
// One row per authorization Yett holds (OAuth connections and HTTP
// credentials), with who answers for it and what the drills proved. Rows
// and drill reports hold no secret and no token; the parsers below copy only
// the known fields all the same.

export type InventoryStateFilter =
  | ''
  | 'not_under_control'
  | 'drill_overdue'
  | 'review_due'
  | 'needs_reconnection'
  | 'suspended'
  | 'revoked';
export type InventoryField = 'owner' | 'backup_revoker' | 'environment' | 'review_by';
export type DrillKind = 'full' | 'unattended';

export interface InventoryRow {
  id: string;
  kind: string;
  name: string;
  provider: string;
  accountRef: string;
  scopes: string[];
  environment: string;
  heldOn: string;
  owner: string;
  backupRevoker: string;
  createdVia: string;
  connectedAt: string;
  lastUsed: string;
  lastRefresh: string;
  reviewBy: string;
  lastDrillId: string;
  lastDrillKind: string;
  lastDrillAt: string;
  lastDrillPassed: boolean;
  nextDrill: string;
  drillEveryDays: number;
  drillKind: string;
  drillable: boolean;
  operations: string[];
  disableProcedure: string;
  state: string;
  stateReason: string;
  /** False when a required column is empty; `missing` names them. */
  controlled: boolean;
  missing: string[];
  reviewDue: boolean;
  drillOverdue: boolean;
  drilling: boolean;
}

export interface InventoryFilter {
  text: string;
  state: InventoryStateFilter;
}

export interface InventorySettings {
  blockUncontrolled: boolean;
}

export interface ExportResult {
  saved: boolean;
  path: string;
  size: number;
}

export interface DrillStep {
  name: string;
  title: string;
  passed: boolean;
  did: string;
  /** HTTP statuses, introspection answers, the refused call's code, audit entry indexes. */
  evidence: string[];
  startedAt: string;
  durationMs: number;
  auditIndex: number;
}

export interface DrillReport {
  id: string;
  authorizationId: string;
  name: string;
  provider: string;
  accountRef: string;
  kind: string;
  trigger: string;
  startedAt: string;
  finishedAt: string;
  running: boolean;
  passed: boolean;
  steps: DrillStep[];
  /** The full drill's steps an unattended drill did not exercise, and why. */
  notExercised: string[];
  /** What a step that passed could not verify, and why. */
  notChecked: string[];
  endState: string;
  /** An unattended drill switched the authorization back on. */
  resumed: boolean;
  advice: string;
}

export const INVENTORY_CHANGED_EVENT = 'inventory:changed';
export const INVENTORY_DRILL_EVENT = 'inventory:drill';

/** The bound Go app.InventoryService, as Wails generates it (wailsjs/go/app/InventoryService.d.ts). */
type InventoryServiceBinding = typeof InventoryServiceBindings;

function boundInventory(): { InventoryService: InventoryServiceBinding } {
  const app = window.go?.app as { InventoryService?: InventoryServiceBinding } | undefined;
  if (!app?.InventoryService) throw new BackendUnavailableError();
  return app as { InventoryService: InventoryServiceBinding };
}

export function parseInventoryRow(v: unknown): InventoryRow {
  const what = 'an inventory row';
  const r = pick<Omit<InventoryRow, 'scopes' | 'operations' | 'missing'>>(
    v,
    {
      id: 'string', kind: 'string', name: 'string', provider: 'string', accountRef: 'string', environment: 'string',
      heldOn: 'string', owner: 'string', backupRevoker: 'string', createdVia: 'string', connectedAt: 'string',
      lastUsed: 'string', lastRefresh: 'string', reviewBy: 'string', lastDrillId: 'string', lastDrillKind: 'string',
      lastDrillAt: 'string', lastDrillPassed: 'boolean', nextDrill: 'string', drillEveryDays: 'number',
      drillKind: 'string', drillable: 'boolean', disableProcedure: 'string', state: 'string', stateReason: 'string',
      controlled: 'boolean', reviewDue: 'boolean', drillOverdue: 'boolean', drilling: 'boolean',
    },
    what,
  );
  const raw = v as Record<string, unknown>;
  return {
    ...r,
    scopes: strings(raw.scopes, what),
    operations: strings(raw.operations, what),
    missing: strings(raw.missing, what),
  };
}

export function parseDrillReport(v: unknown): DrillReport {
  const what = 'a drill report';
  const r = pick<Omit<DrillReport, 'steps' | 'notExercised' | 'notChecked'>>(
    v,
    {
      id: 'string', authorizationId: 'string', name: 'string', provider: 'string', accountRef: 'string',
      kind: 'string', trigger: 'string', startedAt: 'string', finishedAt: 'string', running: 'boolean',
      passed: 'boolean', endState: 'string', resumed: 'boolean', advice: 'string',
    },
    what,
  );
  const raw = v as Record<string, unknown>;
  const steps = list(raw.steps, what).map((s) => ({
    ...pick<Omit<DrillStep, 'evidence'>>(
      s,
      {
        name: 'string', title: 'string', passed: 'boolean', did: 'string', startedAt: 'string',
        durationMs: 'number', auditIndex: 'number',
      },
      'a drill step',
    ),
    evidence: strings((s as Record<string, unknown>).evidence, 'a drill step'),
  }));
  return { ...r, steps, notExercised: strings(raw.notExercised, what), notChecked: strings(raw.notChecked, what) };
}

function parseExportResult(v: unknown): ExportResult {
  return pick<ExportResult>(v, { saved: 'boolean', path: 'string', size: 'number' }, 'an export');
}

export function inventoryRows(): Promise<InventoryRow[]> {
  return call(async () => list(await boundInventory().InventoryService.Rows(), 'the inventory').map(parseInventoryRow));
}

/** Edits one column of a row; the backend audits each edit. */
export function setInventoryField(id: string, field: InventoryField, value: string): Promise<void> {
  return call(() => boundInventory().InventoryService.SetField(id, field, value));
}

export function setDrillSchedule(id: string, everyDays: number, kind: DrillKind): Promise<void> {
  return call(() => boundInventory().InventoryService.SetDrillSchedule(id, everyDays, kind));
}

export function inventorySettings(): Promise<InventorySettings> {
  return call(async () =>
    pick<InventorySettings>(
      await boundInventory().InventoryService.Settings(),
      { blockUncontrolled: 'boolean' },
      'inventory settings',
    ),
  );
}

/** Refuses (on) or only marks (off) every call that would use a row not under control. */
export function setInventoryBlockUncontrolled(on: boolean): Promise<void> {
  return call(() => boundInventory().InventoryService.SetBlockUncontrolled(on));
}

/** Runs a drill and resolves with its report once it ended; onInventoryDrill reports each step meanwhile. */
export function runDrill(id: string, kind: DrillKind): Promise<DrillReport> {
  return call(async () => parseDrillReport(await boundInventory().InventoryService.RunDrill(id, kind)));
}

/** A row's drill reports, newest first ('' for every row's). */
export function drillReports(id: string): Promise<DrillReport[]> {
  return call(async () => list(await boundInventory().InventoryService.Drills(id), 'drill reports').map(parseDrillReport));
}

/** Opens a save dialog; resolves with saved=false if the person cancels. */
export function exportInventory(format: 'csv' | 'json', filter: InventoryFilter): Promise<ExportResult> {
  return call(async () => parseExportResult(await boundInventory().InventoryService.Export(format, filter)));
}

export function exportDrillReport(drillId: string): Promise<ExportResult> {
  return call(async () => parseExportResult(await boundInventory().InventoryService.ExportDrill(drillId)));
}

/** Calls onChange when rows changed: listeners re-read. */
export function onInventoryChanged(onChange: () => void): () => void {
  return subscribe(INVENTORY_CHANGED_EVENT, () => undefined, () => onChange(), () => {});
}

/** Calls onReport with a running drill's report after each step, and once it ended. */
export function onInventoryDrill(onReport: (r: DrillReport) => void): () => void {
  return subscribe(INVENTORY_DRILL_EVENT, parseDrillReport, onReport, () => {});
}

// ---- SSH hosts (app.SSHService) ----
// Hosts agents run commands on through ssh.exec. A host's private key stays
// in the vault: views carry its public key (for authorized_keys) and
// fingerprints, and the parsers copy only the known fields. The one secret
// going out is SSHHostForm.privateKey (an imported key) with its passphrase.

export interface SSHSettings {
  approval: ApprovalMode;
  /** One rule per line: 'exact: …', 'prefix: …' (operands only) or 'prefix+options: …'; empty allows any command (each approved). */
  rules: string;
  /** 0 means the default. */
  timeoutSeconds: number;
  record: boolean;
  owner: string;
  backupRevoker: string;
}

export interface SSHHostForm {
  name: string;
  address: string;
  port: number;
  user: string;
  /** '' makes a new Ed25519 key in Yett; otherwise an OpenSSH, PEM or PKCS#8 private key to import. */
  privateKey: string;
  passphrase: string;
  settings: SSHSettings;
}

export interface SSHPin {
  type: string;
  fingerprint: string;
}

export interface SSHHostView {
  id: string;
  name: string;
  address: string;
  port: number;
  user: string;
  /** The authorized_keys line of the host's key in Yett. */
  publicKey: string;
  keyFingerprint: string;
  pins: SSHPin[];
  /** A host key the host presented that is not pinned ('' when none). */
  alertFingerprint: string;
  alertAt: string;
  settings: SSHSettings;
  controlled: boolean;
  problems: string[];
  createdAt: string;
  version: number;
}

export interface SSHRecordingView {
  id: string;
  hostId: string;
  started: string;
  bytes: number;
}

export interface SSHRecordingText extends SSHRecordingView {
  /** asciicast v2 text. */
  cast: string;
  complete: boolean;
}

export const SSH_CHANGED_EVENT = 'ssh:changed';

/** The bound Go app.SSHService, as Wails generates it (wailsjs/go/app/SSHService.d.ts). */
type SSHServiceBinding = typeof SSHServiceBindings;

function boundSSH(): { SSHService: SSHServiceBinding } {
  const app = window.go?.app as { SSHService?: SSHServiceBinding } | undefined;
  if (!app?.SSHService) throw new BackendUnavailableError();
  return app as { SSHService: SSHServiceBinding };
}

function parseSSHSettings(v: unknown): SSHSettings {
  const s = pick<SSHSettings>(
    v,
    { approval: 'string', rules: 'string', timeoutSeconds: 'number', record: 'boolean', owner: 'string', backupRevoker: 'string' },
    'SSH host settings',
  );
  if (s.approval !== 'session' && s.approval !== 'per_call') throw new ProtocolError('SSH host settings');
  return s;
}

export function parseSSHHostView(v: unknown): SSHHostView {
  const h = pick<Omit<SSHHostView, 'pins' | 'settings' | 'problems'>>(
    v,
    {
      id: 'string', name: 'string', address: 'string', port: 'number', user: 'string', publicKey: 'string',
      keyFingerprint: 'string', alertFingerprint: 'string', alertAt: 'string', controlled: 'boolean',
      createdAt: 'string', version: 'number',
    },
    'an SSH host',
  );
  const r = v as Record<string, unknown>;
  const pins = list(r.pins, 'an SSH host').map((p) => pick<SSHPin>(p, { type: 'string', fingerprint: 'string' }, 'a host key pin'));
  return { ...h, pins, settings: parseSSHSettings(r.settings), problems: strings(r.problems, 'an SSH host') };
}

const RECORDING_FIELDS: Record<string, FieldType> = { id: 'string', hostId: 'string', started: 'string', bytes: 'number' };

export function listSSHHosts(): Promise<SSHHostView[]> {
  return call(async () => list(await boundSSH().SSHService.Hosts(), 'an SSH host list').map(parseSSHHostView));
}

/** Adds a host; the view carries the public key to copy into the host's authorized_keys. */
export function addSSHHost(form: SSHHostForm): Promise<SSHHostView> {
  return call(async () => parseSSHHostView(await boundSSH().SSHService.AddHost(form)));
}

export function updateSSHHost(id: string, settings: SSHSettings): Promise<SSHHostView> {
  return call(async () => parseSSHHostView(await boundSSH().SSHService.UpdateHost(id, settings)));
}

export function removeSSHHost(id: string): Promise<void> {
  return call(() => boundSSH().SSHService.RemoveHost(id));
}

/** Pins pasted known_hosts lines, ssh-keyscan output or public keys, replacing the host's pins. */
export function pinSSHPasted(id: string, text: string): Promise<SSHHostView> {
  return call(async () => parseSSHHostView(await boundSSH().SSHService.PinPasted(id, text)));
}

/** Pins what ~/.ssh/known_hosts holds for the host; skipped counts its lines Yett could not pin. */
export function pinSSHFromKnownHosts(id: string): Promise<{ host: SSHHostView; skipped: number }> {
  return call(async () => {
    const r = await boundSSH().SSHService.PinFromKnownHosts(id);
    if (!isRecord(r) || typeof r.skipped !== 'number') throw new ProtocolError('a known_hosts pin');
    return { host: parseSSHHostView(r.host), skipped: r.skipped };
  });
}

/** Connects, authenticates with the host's key, and pins the host key only once the host accepted it. */
export function trustSSHOnFirstUse(id: string): Promise<SSHHostView> {
  return call(async () => parseSSHHostView(await boundSSH().SSHService.TrustOnFirstUse(id)));
}

/** Pins the host key a host presented instead of its pin, after the person checked the change. */
export function acceptSSHPresented(id: string): Promise<SSHHostView> {
  return call(async () => parseSSHHostView(await boundSSH().SSHService.AcceptPresented(id)));
}

export function listSSHRecordings(hostId: string): Promise<SSHRecordingView[]> {
  return call(async () =>
    list(await boundSSH().SSHService.Recordings(hostId), 'a recording list').map((r) =>
      pick<SSHRecordingView>(r, RECORDING_FIELDS, 'a recording'),
    ),
  );
}

export function readSSHRecording(id: string): Promise<SSHRecordingText> {
  return call(async () =>
    pick<SSHRecordingText>(
      await boundSSH().SSHService.Recording(id),
      { ...RECORDING_FIELDS, cast: 'string', complete: 'boolean' },
      'a recording',
    ),
  );
}

/** Calls onChange when a host was added, edited, pinned or removed, or presented an unpinned key. */
export function onSSHChanged(onChange: () => void): () => void {
  return subscribe(SSH_CHANGED_EVENT, () => undefined, () => onChange(), () => {});
}

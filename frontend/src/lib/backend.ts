// The only module that talks to the Go side. Wails v2 binds the Go services
// of package app at window.go.app (VaultService, ApprovalService, …) and its
// runtime at window.runtime; everything else in the UI imports typed
// functions from here. The contract is generated from the Go side, twice
// over and each checked by a Go test: the services' methods and forms by
// Wails (./wailsjs, TestUIContractIsGenerated), the views they send and the
// closed sets of their fields by app/contract_views_test.go
// (./contract.gen.ts, TestWindowEnumsAreGenerated). A renamed method, form
// field or view field fails the type check; every view that comes back is
// checked at run time by parseView against its generated description.
//
// No secret ever comes back through this module: the Go adapter only returns
// redacted views (TestNoViewFieldIsNamedLikeASecret stops a view field named
// like one). The one secret going out is NewCredentialForm.secret, and the
// passphrase arguments of Create and Unlock.
import { VIEWS } from './contract.gen';
import type * as V from './contract.gen';
import type * as VaultServiceBindings from './wailsjs/go/app/VaultService';
import type * as ApprovalServiceBindings from './wailsjs/go/app/ApprovalService';
import type * as AuditServiceBindings from './wailsjs/go/app/AuditService';
import type * as OAuthServiceBindings from './wailsjs/go/app/OAuthService';
import type * as ConnectServiceBindings from './wailsjs/go/app/ConnectService';
import type * as DesktopServiceBindings from './wailsjs/go/app/DesktopService';
import type * as InventoryServiceBindings from './wailsjs/go/app/InventoryService';
import type * as SSHServiceBindings from './wailsjs/go/app/SSHService';

// ---- The views, generated from Go (contract.gen.ts) ----
// Every view the Go side sends has a TypeScript interface and a field list
// generated from its Go type (app/contract_views_test.go). parseView checks
// an answer against that list and copies exactly its fields, so a value the
// window does not know (a state added in Go, a field of the wrong type)
// is refused, never shown as something else.

export * from './contract.gen';
export type AgentParent = V.ParentView;
export type AgentProcess = V.ProcessView;
export type Decision = V.DecisionView;
export type DrillReport = V.DrillReportView;
export type DrillStep = V.DrillStepView;
export type InventoryRow = V.InventoryRowView;
export type InventorySettings = V.InventorySettingsView;
export type NotificationPolicy = V.NotificationPolicyView;
export type NotificationServerStatus = V.NotificationServerView;
export type NotificationStatus = V.NotificationStatusView;
export type OAuthSettings = V.SettingsView;
export type OperationParam = V.ParamView;
export type PassphraseChange = V.PassphraseChangeView;
export type RevokeStep = V.RevokeStepView;
export type SSHPin = V.SSHPinView;
export type SSHSettings = V.SSHSettingsForm;
export type VerificationSettings = V.VerificationView;

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


/** The edit form: everything but the secret (rotateSecret replaces that). */
export type CredentialEditForm = Omit<NewCredentialForm, 'secret'>;

export interface NewCredentialForm {
  name: string;
  secret: string;
  format: V.CredentialFormat;
  headerName: string;
  template: string;
  username: string;
  hosts: string[];
  pathPrefixes: string[];
  approval: V.ApprovalMode;
}

export const VAULT_STATUS_EVENT = 'vault:status';


/** The bound Go services of package app, as Wails generates them (./wailsjs/go/app). */
interface Services {
  VaultService: typeof VaultServiceBindings;
  ApprovalService: typeof ApprovalServiceBindings;
  AuditService: typeof AuditServiceBindings;
  OAuthService: typeof OAuthServiceBindings;
  ConnectService: typeof ConnectServiceBindings;
  DesktopService: typeof DesktopServiceBindings;
  InventoryService: typeof InventoryServiceBindings;
  SSHService: typeof SSHServiceBindings;
}

function service<K extends keyof Services>(name: K): Services[K] {
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

async function call<T>(invoke: () => Promise<T>): Promise<T> {
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

export function status(): Promise<V.VaultStatus> {
  return call(async () => parseView('VaultStatus', await service('VaultService').Status()));
}

export function create(passphrase: string, useKeyring: boolean): Promise<V.VaultStatus> {
  return call(async () => parseView('VaultStatus', await service('VaultService').Create(passphrase, useKeyring)));
}

export function unlock(passphrase: string): Promise<V.VaultStatus> {
  return call(async () => parseView('VaultStatus', await service('VaultService').Unlock(passphrase)));
}

export function unlockWithKeyring(): Promise<V.VaultStatus> {
  return call(async () => parseView('VaultStatus', await service('VaultService').UnlockWithKeyring()));
}

export function lock(): Promise<V.VaultStatus> {
  return call(async () => parseView('VaultStatus', await service('VaultService').Lock()));
}

export function setAutoLockMinutes(minutes: number): Promise<V.VaultStatus> {
  return call(async () => parseView('VaultStatus', await service('VaultService').SetAutoLockMinutes(minutes)));
}

export function enableKeyring(on: boolean): Promise<V.VaultStatus> {
  return call(async () => parseView('VaultStatus', await service('VaultService').EnableKeyring(on)));
}

/** Restarts the idle auto-lock timer. Callers throttle it (see activity.ts). */
export function touch(): Promise<void> {
  return call(() => service('VaultService').Touch());
}

export function listCredentials(): Promise<V.CredentialView[]> {
  return call(async () => parseViews('CredentialView', await service('VaultService').ListCredentials()));
}

export function addCredential(form: NewCredentialForm): Promise<V.CredentialView> {
  return call(async () => parseView('CredentialView', await service('VaultService').AddCredential(form)));
}

export function removeCredential(id: string): Promise<void> {
  return call(() => service('VaultService').RemoveCredential(id));
}

/** Edits everything but the secret; version is the one the form was opened on. */
export function updateCredential(id: string, version: number, form: CredentialEditForm): Promise<V.CredentialView> {
  return call(async () => parseView('CredentialView', await service('VaultService').UpdateCredential(id, version, form)));
}

/** Replaces the secret (write-only, like the first one); the version goes up. */
export function rotateSecret(id: string, version: number, secret: string): Promise<V.CredentialView> {
  return call(async () => parseView('CredentialView', await service('VaultService').RotateSecret(id, version, secret)));
}

/** Which stored credentials these hosts and paths duplicate or overlap (except: the one being edited). */
export function checkBindings(hosts: string[], paths: string[], except = ''): Promise<V.BindingOverlap[]> {
  return call(async () =>
    parseViews('BindingOverlap', await service('VaultService').CheckBindings(hosts, paths, except)),
  );
}

export function changePassphrase(current: string, next: string): Promise<PassphraseChange> {
  return call(async () => {
    return parseView('PassphraseChangeView', await service('VaultService').ChangePassphrase(current, next));
  });
}

/** Asks where to save, then writes an encrypted backup; saved=false when the person cancels. */
export function exportBackup(passphrase: string): Promise<V.BackupExport> {
  return call(async () =>
    parseView('BackupExport', await service('VaultService').ExportBackup(passphrase)),
  );
}

/** Asks which backup to restore; chosen=false when the person cancels. */
export function chooseBackup(): Promise<V.BackupChoice> {
  return call(async () =>
    parseView('BackupChoice', await service('VaultService').ChooseBackup()),
  );
}

/** Replaces the vault's contents with the backup and unlocks it with the backup's passphrase. */
export function restoreBackup(path: string, passphrase: string): Promise<V.VaultStatus> {
  return call(async () => parseView('VaultStatus', await service('VaultService').RestoreBackup(path, passphrase)));
}

/** Stops waiting for the system keyring; the call that waited returns and changes nothing. */
export function cancelKeyringWait(): Promise<void> {
  return call(() => service('VaultService').CancelKeyringWait());
}

/**
 * Calls onStatus with every status the backend pushes (lock from idle, sleep
 * or screen lock included); onError when a payload cannot be understood.
 * Returns the unsubscribe function.
 */
export function onVaultStatus(
  onStatus: (s: V.VaultStatus) => void,
  onError: (e: BackendError) => void = () => {},
): () => void {
  return subscribe(VAULT_STATUS_EVENT, (v: unknown) => parseView('VaultStatus', v), onStatus, onError);
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

export const APPROVAL_CHANGED_EVENT = 'approval:changed';



export function pendingApprovals(): Promise<V.ApprovalCard[]> {
  return call(async () =>
    parseViews('ApprovalCard', await service('ApprovalService').Pending()),
  );
}

/** Approves or denies a card; the card leaves when the backend says so. */
export function answerApproval(id: string, approve: boolean): Promise<void> {
  return call(() => service('ApprovalService').Answer(id, approve));
}

export function liveSessions(): Promise<V.LiveSession[]> {
  return call(async () =>
    parseViews('LiveSession', await service('ApprovalService').Sessions()),
  );
}

/** The recent answers and expiries of this run of Yett, newest first. */
export function recentDecisions(): Promise<Decision[]> {
  return call(async () =>
    parseViews('DecisionView', await service('ApprovalService').Decisions()),
  );
}

export function revokeSession(sessionId: string): Promise<void> {
  return call(() => service('ApprovalService').Revoke(sessionId));
}

/**
 * Calls onState with the whole approval state every time a card appears or
 * is withdrawn, or a session starts or ends; onError when a payload cannot
 * be understood. Returns the unsubscribe function.
 */
export function onApprovalChanged(
  onState: (s: V.ApprovalState) => void,
  onError: (e: BackendError) => void = () => {},
): () => void {
  return subscribe(APPROVAL_CHANGED_EVENT, (v: unknown) => parseView('ApprovalState', v), onState, onError);
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

/** One page of a view, newest first: what comes before the log index `before` (0: from the newest), at most `limit` (0: 100). */
export interface PageRequest {
  before: number;
  limit: number;
}

export interface ActivityFilter extends PageRequest {
  sessionId: string;
  channel: string;
  class: string;
  /** RFC 3339, or '' for no bound. */
  from: string;
  to: string;
}

export const AUDIT_CHANGED_EVENT = 'audit:changed';



export function auditStatus(): Promise<V.AuditStatus> {
  return call(async () => parseView('AuditStatus', await service('AuditService').Status()));
}

/** The page size the views ask for, and the most a reload asks for at once. */
export const AUDIT_PAGE = 100;
export const AUDIT_MAX_PAGE = 1000;

export function loggedSessions(page: PageRequest = { before: 0, limit: AUDIT_PAGE }): Promise<V.SessionsView> {
  return call(async () => parseView('SessionsView', await service('AuditService').Sessions(page)));
}

export function activity(filter: ActivityFilter): Promise<V.ActivityView> {
  return call(async () => parseView('ActivityView', await service('AuditService').Activity(filter)));
}

/** Opens a save dialog; resolves with saved=false if the person cancels. */
export function exportCheckpoint(): Promise<V.CheckpointExport> {
  return call(async () =>
    parseView('CheckpointExport', await service('AuditService').ExportCheckpoint()),
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
  flow: V.GrantFlow;
  owner: string;
  backupRevoker: string;
  /** YYYY-MM-DD, or '' for none. */
  reviewBy: string;
  disableProcedure: string;
  dpop: boolean;
  /** Hosts of the account's API, where its operations may send its token; [] for the preset's or the provider's own. */
  apiHosts?: string[];
}

export interface InventoryUpdate {
  owner: string;
  backupRevoker: string;
  /** YYYY-MM-DD, or '' for none. */
  reviewBy: string;
  disableProcedure: string;
}

export const OAUTH_CHANGED_EVENT = 'oauth:changed';
export const OAUTH_FLOW_EVENT = 'oauth:flow';



export function oauthPresets(): Promise<V.PresetView[]> {
  return call(async () => parseViews('PresetView', await service('OAuthService').Presets()));
}

/** Reads the issuer's metadata (RFC 8414 / OpenID discovery). */
export function discoverIssuer(issuer: string): Promise<V.DiscoveryView> {
  return call(async () => parseView('DiscoveryView', await service('OAuthService').Discover(issuer)));
}

/** Makes a key pair for private_key_jwt and returns only its public half. */
export function newClientKey(): Promise<V.ClientKeyView> {
  return call(async () => parseView('ClientKeyView', await service('OAuthService').NewClientKey()));
}

/** Starts a connection; for authorization_code the backend opens the browser once. */
export function connectOAuth(form: ConnectForm): Promise<V.FlowView> {
  return call(async () => parseView('FlowView', await service('OAuthService').Connect(form)));
}

export function reconnectOAuth(id: string): Promise<V.FlowView> {
  return call(async () => parseView('FlowView', await service('OAuthService').Reconnect(id)));
}

export function oauthFlow(flowId: string): Promise<V.FlowView> {
  return call(async () => parseView('FlowView', await service('OAuthService').Flow(flowId)));
}

export function cancelOAuthFlow(flowId: string): Promise<void> {
  return call(() => service('OAuthService').CancelFlow(flowId));
}

export function oauthAuthorizations(): Promise<V.AuthorizationView[]> {
  return call(async () =>
    parseViews('AuthorizationView', await service('OAuthService').Authorizations()),
  );
}

export function updateInventory(id: string, inv: InventoryUpdate): Promise<void> {
  return call(() => service('OAuthService').UpdateInventory(id, inv));
}

/** Disables locally, revokes at the provider, then verifies; reports each step. */
export function revokeAuthorization(id: string): Promise<V.RevokeReport> {
  return call(async () => parseView('RevokeReport', await service('OAuthService').Revoke(id)));
}

/** Sets where an authorization is revoked and verified at its provider ('' removes one). */
export function setAuthorizationEndpoints(id: string, revocation: string, introspection: string): Promise<void> {
  return call(() => service('OAuthService').SetEndpoints(id, revocation, introspection));
}

/** Switches a suspended authorization back on. */
export function resumeAuthorization(id: string): Promise<void> {
  return call(() => service('OAuthService').Resume(id));
}

export function oauthOperations(): Promise<V.OperationView[]> {
  return call(async () =>
    parseViews('OperationView', await service('OAuthService').Operations()),
  );
}

export function saveOperation(op: V.OperationView): Promise<void> {
  return call(() => service('OAuthService').SaveOperation(op));
}

export function removeOperation(name: string): Promise<void> {
  return call(() => service('OAuthService').RemoveOperation(name));
}

export function oauthSettings(): Promise<OAuthSettings> {
  return call(async () =>
    parseView('SettingsView', await service('OAuthService').Settings()),
  );
}

export function setBlockUncontrolled(on: boolean): Promise<void> {
  return call(() => service('OAuthService').SetBlockUncontrolled(on));
}

/** Calls onChange when authorizations or operations changed: listeners re-read. */
export function onOAuthChanged(onChange: () => void): () => void {
  return subscribe(OAUTH_CHANGED_EVENT, () => undefined, () => onChange(), () => {});
}

/** Calls onFlow with every flow update the backend pushes. */
export function onOAuthFlow(
  onFlow: (f: V.FlowView) => void,
  onError: (e: BackendError) => void = () => {},
): () => void {
  return subscribe(OAUTH_FLOW_EVENT, (v: unknown) => parseView('FlowView', v), onFlow, onError);
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



export function connectInfo(): Promise<V.ConnectInfo> {
  return call(async () => parseView('ConnectInfo', await service('ConnectService').Info()));
}

// ---- Yett in the background (app.DesktopService) ----
// Closing the window keeps Yett running; quitting is explicit. Approval
// cards reach the person as native notifications, within a policy the
// backend enforces (this module only reads and stores the choice).

export const DESKTOP_CHANGED_EVENT = 'desktop:changed';
export const SHOW_CARD_EVENT = 'app:show-card';
export const CLOSE_REQUESTED_EVENT = 'app:close-requested';



/** Trusts the notification server Settings shows (by bus name); the system may ask to confirm it is you. */
export function acceptNotificationServer(name: string): Promise<V.DesktopSettings> {
  return call(async () => parseView('DesktopSettings', await service('DesktopService').AcceptNotificationServer(name)));
}

/** Chooses when Yett asks the system to confirm it is the person (sealed in the vault). */
export function setVerification(mode: V.VerificationMode): Promise<V.DesktopSettings> {
  return call(async () => parseView('DesktopSettings', await service('DesktopService').SetVerification(mode)));
}

export function desktopSettings(): Promise<V.DesktopSettings> {
  return call(async () => parseView('DesktopSettings', await service('DesktopService').Settings()));
}

/** Turns "Start Yett when I log in" on or off. */
export function setAutostart(on: boolean): Promise<V.DesktopSettings> {
  return call(async () => parseView('DesktopSettings', await service('DesktopService').SetAutostart(on)));
}

/** Stores which cards a notification may answer; the backend enforces it. */
export function setNotificationPolicy(p: NotificationPolicy): Promise<V.DesktopSettings> {
  return call(async () => parseView('DesktopSettings', await service('DesktopService').SetNotificationPolicy(p)));
}

/** Hides the window; Yett keeps serving agents and answering through notifications. */
export function keepRunningInBackground(): Promise<void> {
  return call(() => service('DesktopService').KeepRunningInBackground());
}

/** Quits Yett: the vault locks, waiting agents are refused, the gateway stops. */
export function quitYett(): Promise<void> {
  return call(() => service('DesktopService').Quit());
}

export function onDesktopChanged(onSettings: (s: V.DesktopSettings) => void): () => void {
  return subscribe(DESKTOP_CHANGED_EVENT, (v: unknown) => parseView('DesktopSettings', v), onSettings, () => {});
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

export interface InventoryFilter {
  text: string;
  state: InventoryStateFilter;
}

export const INVENTORY_CHANGED_EVENT = 'inventory:changed';
export const INVENTORY_DRILL_EVENT = 'inventory:drill';



export function inventoryRows(): Promise<InventoryRow[]> {
  return call(async () => parseViews('InventoryRowView', await service('InventoryService').Rows()));
}

/** Edits one column of a row; the backend audits each edit. */
export function setInventoryField(id: string, field: InventoryField, value: string): Promise<void> {
  return call(() => service('InventoryService').SetField(id, field, value));
}

export function setDrillSchedule(id: string, everyDays: number, kind: DrillKind): Promise<void> {
  return call(() => service('InventoryService').SetDrillSchedule(id, everyDays, kind));
}

export function inventorySettings(): Promise<InventorySettings> {
  return call(async () =>
    parseView('InventorySettingsView', await service('InventoryService').Settings()),
  );
}

/** Refuses (on) or only marks (off) every call that would use a row not under control. */
export function setInventoryBlockUncontrolled(on: boolean): Promise<void> {
  return call(() => service('InventoryService').SetBlockUncontrolled(on));
}

/** Runs a drill and resolves with its report once it ended; onInventoryDrill reports each step meanwhile. */
export function runDrill(id: string, kind: DrillKind): Promise<DrillReport> {
  return call(async () => parseView('DrillReportView', await service('InventoryService').RunDrill(id, kind)));
}

/** A row's drill reports, newest first ('' for every row's). */
export function drillReports(id: string): Promise<DrillReport[]> {
  return call(async () => parseViews('DrillReportView', await service('InventoryService').Drills(id)));
}

/** Opens a save dialog; resolves with saved=false if the person cancels. */
export function exportInventory(format: 'csv' | 'json', filter: InventoryFilter): Promise<V.ExportResult> {
  return call(async () => parseView('ExportResult', await service('InventoryService').Export(format, filter)));
}

export function exportDrillReport(drillId: string): Promise<V.ExportResult> {
  return call(async () => parseView('ExportResult', await service('InventoryService').ExportDrill(drillId)));
}

/** Calls onChange when rows changed: listeners re-read. */
export function onInventoryChanged(onChange: () => void): () => void {
  return subscribe(INVENTORY_CHANGED_EVENT, () => undefined, () => onChange(), () => {});
}

/** Calls onReport with a running drill's report after each step, and once it ended. */
export function onInventoryDrill(onReport: (r: DrillReport) => void): () => void {
  return subscribe(INVENTORY_DRILL_EVENT, (v: unknown) => parseView('DrillReportView', v), onReport, () => {});
}

// ---- SSH hosts (app.SSHService) ----
// Hosts agents run commands on through ssh.exec. A host's private key stays
// in the vault: views carry its public key (for authorized_keys) and
// fingerprints, and the parsers copy only the known fields. The one secret
// going out is SSHHostForm.privateKey (an imported key) with its passphrase.

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

export const SSH_CHANGED_EVENT = 'ssh:changed';



export function listSSHHosts(): Promise<V.SSHHostView[]> {
  return call(async () => parseViews('SSHHostView', await service('SSHService').Hosts()));
}

/** Adds a host; the view carries the public key to copy into the host's authorized_keys. */
export function addSSHHost(form: SSHHostForm): Promise<V.SSHHostView> {
  return call(async () => parseView('SSHHostView', await service('SSHService').AddHost(form)));
}

export function updateSSHHost(id: string, settings: SSHSettings): Promise<V.SSHHostView> {
  return call(async () => parseView('SSHHostView', await service('SSHService').UpdateHost(id, settings)));
}

export function removeSSHHost(id: string): Promise<void> {
  return call(() => service('SSHService').RemoveHost(id));
}

/** Pins pasted known_hosts lines, ssh-keyscan output or public keys, replacing the host's pins. */
export function pinSSHPasted(id: string, text: string): Promise<V.SSHHostView> {
  return call(async () => parseView('SSHHostView', await service('SSHService').PinPasted(id, text)));
}

/** Pins what ~/.ssh/known_hosts holds for the host; skipped counts its lines Yett could not pin. */
export function pinSSHFromKnownHosts(id: string): Promise<{ host: V.SSHHostView; skipped: number }> {
  return call(async () => {
    return parseView('SSHPinResult', await service('SSHService').PinFromKnownHosts(id));
  });
}

/** Connects, authenticates with the host's key, and pins the host key only once the host accepted it. */
export function trustSSHOnFirstUse(id: string): Promise<V.SSHHostView> {
  return call(async () => parseView('SSHHostView', await service('SSHService').TrustOnFirstUse(id)));
}

/** Pins the host key a host presented instead of its pin, after the person checked the change. */
export function acceptSSHPresented(id: string): Promise<V.SSHHostView> {
  return call(async () => parseView('SSHHostView', await service('SSHService').AcceptPresented(id)));
}

export function listSSHRecordings(hostId: string): Promise<V.SSHRecordingView[]> {
  return call(async () =>
    parseViews('SSHRecordingView', await service('SSHService').Recordings(hostId)),
  );
}

export function readSSHRecording(id: string): Promise<V.SSHRecordingText> {
  return call(async () =>
    parseView('SSHRecordingText', await service('SSHService').Recording(id)),
  );
}

/** Calls onChange when a host was added, edited, pinned or removed, or presented an unpinned key. */
export function onSSHChanged(onChange: () => void): () => void {
  return subscribe(SSH_CHANGED_EVENT, () => undefined, () => onChange(), () => {});
}

// Plain words for the audit log's reasons and event types, shared by the
// Sessions and Activity views. Unknown values are shown as they came: the
// backend's word is better than a guess.

const REASONS: Record<string, string> = {
  process_exited: 'the agent process exited',
  identity_mismatch: 'the process no longer matched the approved identity',
  gateway_restarted: 'the gateway restarted',
  vault_locked: 'the vault was locked',
  vault_state_changed: 'the vault was locked or unlocked',
  revoked: 'revoked',
  expired: 'expired',
  user_denied: 'you denied it',
  approval_timeout: 'no answer in time',
  policy: 'not allowed by policy',
  invalid_request: 'invalid request',
  audit_unavailable: 'the audit log could not record it',
  // Vault lock reasons.
  user: 'locked by you',
  idle: 'idle timeout',
  sleep: 'the computer went to sleep',
  screen_locked: 'the screen locked',
  tray: 'locked from the tray icon',
  app_exit: 'Yett closed',
  vault_created: 'vault created',
  'backup restored': 'a backup was restored',
  // OAuth operations refused before anything was sent.
  authorization_needs_reconnection: 'the account needs its owner to reconnect it',
  provider_unreachable: 'the provider could not be reached to renew access',
  provider_refused: 'the provider refused to renew access',
};

/** Where an approval was given, as a phrase: "in the app", "from a notification". */
export function surfaceWords(surface: string): string {
  switch (surface) {
    case '':
      return '';
    case 'app':
    case 'desktop card':
      return 'in the app';
    case 'notification':
      return 'from a notification';
    case 'terminal':
      return 'in yett serve’s terminal';
  }
  return `through ${surface}`;
}

export function reasonWords(reason: string): string {
  return REASONS[reason] ?? reason;
}

const TYPES: Record<string, string> = {
  vault_locked: 'Vault locked',
  vault_unlocked: 'Vault unlocked',
  gateway_started: 'Gateway started',
  gateway_stopped: 'Gateway stopped',
  session_approved: 'Session approved',
  session_ended: 'Session ended',
  approval_timeout: 'Approval timed out',
  audit_recovered: 'Log recovered after an interrupted write',
  authorization_connected: 'Account connected',
  token_refreshed: 'Access renewed',
  authorization_disabled: 'Account disabled in Yett',
  authorization_revoked: 'Account revoked at the provider',
  grant_given: 'Calls like an approved one allowed for 10 minutes',
  grant_ended: 'Time-boxed grant ended',
};

// What a credential or vault change was, by its reason.
const CHANGES: Record<string, string> = {
  credential_added: 'Credential added',
  credential_edited: 'Credential edited',
  secret_rotated: 'Secret rotated',
  credential_removed: 'Credential removed',
  credential_restored: 'Credential restored (removal undone)',
  rotation_reminder_changed: 'Rotation reminder changed',
  passphrase_changed: 'Vault passphrase changed',
  keyring_on: 'Keyring unlock turned on',
  keyring_off: 'Keyring unlock turned off',
  auto_lock_changed: 'Auto-lock time changed',
  backup_exported: 'Encrypted backup exported',
  backup_reminder_changed: 'Backup reminder changed',
  backup_restored: 'Vault restored from a backup',
  controls_changed: 'A safety setting changed',
  ssh_host_added: 'SSH host added',
  ssh_host_edited: 'SSH host settings changed',
  ssh_host_removed: 'SSH host removed',
  ssh_host_keys_pinned: 'SSH host key pinned',
  ssh_host_key_alert: 'SSH host presented an unpinned key',
  mcp_server_added: 'MCP server added',
  mcp_server_edited: 'MCP server settings changed',
  mcp_server_removed: 'MCP server removed',
};

/** Whether reason names a credential or vault change (it is then the title). */
export function isChangeReason(reason: string): boolean {
  return reason in CHANGES;
}

export function typeWords(type: string, reason = ''): string {
  if ((type === 'credential_changed' || type === 'vault_changed') && CHANGES[reason]) return CHANGES[reason];
  return TYPES[type] ?? type.replaceAll('_', ' ');
}

const CLASSES: Record<string, string> = {
  success: 'Succeeded',
  client_error: 'Refused by the service',
  server_error: 'Service error',
  transport_error: 'Network error',
  unknown: 'Outcome unknown',
  denied: 'Denied',
  pending: 'No result recorded',
};

export function classWords(c: string): string {
  return CLASSES[c] ?? c;
}

export const CLASS_OPTIONS = Object.keys(CLASSES);

/** What an OAuth custody or drill entry carries beyond its type (app.ActivityItem). */
export interface CustodyFacts {
  type: string;
  step: string;
  outcome: string;
  code: string;
  drillKind: string;
}

const TOKEN: Record<string, string> = { refresh_token: 'refresh token', access_token: 'access token' };
const token = (code: string) => TOKEN[code.replace(/^(retry_|unverified_)/, '')] ?? 'token';
const kind = (k: string) => (k === 'full' ? 'Full' : k === 'unattended' ? 'Unattended' : 'A');

const DRILL_STEPS: Record<string, string> = {
  local_disable: 'switched off in Yett',
  provider_revocation: 'revoked at the provider',
  call_refused: 'a call is refused locally',
  stays_refused: 'it stays refused',
  audit_names_users: 'the audit log names who used it',
  revocation_endpoint: 'the revocation endpoint answers',
  refresh_token_kept: 'the refresh token is left alone',
  re_enable: 'switched back on',
  call_passes: 'a call passes the local checks again',
};

/**
 * A title for an OAuth custody or revocation drill entry, from its step
 * and outcome: "Account revoked at the provider" four times said nothing
 * when verification failed, and switching back on read as "connected".
 * '' when the entry is neither.
 */
export function custodyWords(f: CustodyFacts): string {
  const ok = f.outcome === 'ok';
  switch (f.type) {
    case 'authorization_connected':
      return f.step === 'resume' ? 'Account switched back on' : 'Account connected';
    case 'authorization_disabled':
      return f.step === 'suspend' ? 'Account switched off in Yett (its tokens kept)' : 'Account disabled in Yett';
    case 'authorization_edited':
      return f.step === 'endpoints' ? 'Provider endpoints changed' : 'Account changed';
    case 'authorization_revoked':
      switch (f.step) {
        case 'provider_revocation':
          if (ok) return `Revoked at the provider: the ${token(f.code)}`;
          if (f.code === 'no_endpoint') return 'Not revoked at the provider: Yett knows no revocation endpoint';
          if (f.code.startsWith('retry_')) return `The provider could not be reached to revoke the ${token(f.code)}; Yett retries`;
          return `The provider refused to revoke the ${token(f.code)}${f.code.startsWith('http_') ? ` (HTTP ${f.code.slice(5)})` : ''}`;
        case 'verification':
          if (ok && f.code.startsWith('unverified_')) return `Revocation accepted, not verified: no introspection endpoint for the ${token(f.code)}`;
          if (ok) return `Revocation verified: the ${token(f.code)} is inactive`;
          return `Revocation not verified: the ${token(f.code)} may still be active`;
        case 'connect_failed':
          return ok
            ? `A failed connection’s ${token(f.code)} revoked at the provider`
            : `A failed connection’s token could not be revoked (${f.code.replaceAll('_', ' ')})`;
        default:
          return 'Account revoked at the provider';
      }
    case 'drill_started':
      return `${kind(f.drillKind)} revocation drill started`;
    case 'drill_step':
      return `Drill step ${ok ? 'passed' : 'failed'}: ${DRILL_STEPS[f.step] ?? f.step.replaceAll('_', ' ')}`;
    case 'drill_finished':
      return `${kind(f.drillKind)} revocation drill ${ok ? 'passed' : 'failed'}`;
    default:
      return '';
  }
}

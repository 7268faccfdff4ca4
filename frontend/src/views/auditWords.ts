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
};

// What a credential or vault change was, by its reason.
const CHANGES: Record<string, string> = {
  credential_added: 'Credential added',
  credential_edited: 'Credential edited',
  secret_rotated: 'Secret rotated',
  credential_removed: 'Credential removed',
  passphrase_changed: 'Vault passphrase changed',
  keyring_on: 'Keyring unlock turned on',
  keyring_off: 'Keyring unlock turned off',
  auto_lock_changed: 'Auto-lock time changed',
  backup_exported: 'Encrypted backup exported',
  backup_restored: 'Vault restored from a backup',
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

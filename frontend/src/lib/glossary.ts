// The words Yett uses that a person may not know, defined once. HelpTerm
// shows one where the word appears; About lists them all.

export interface Term {
  /** The word as the screens write it. */
  word: string;
  /** What it means, in a sentence or three. */
  meaning: string;
}

export const GLOSSARY = {
  checkpoint: {
    word: 'checkpoint',
    meaning:
      'A small signed file that names the audit log’s size and fingerprint at one moment. Kept somewhere else (another disk, a message to yourself), it lets yett audit verify --checkpoint prove later that no entry before it was removed or rewritten.',
  },
  backupRevoker: {
    word: 'backup revoker',
    meaning:
      'The person who can cut a credential or account off when its owner cannot (on holiday, left the team). Every row in the inventory should name one besides the owner.',
  },
  underControl: {
    word: 'not under control',
    meaning:
      'A credential, host, account or server is under control once it has an owner, a backup revoker and an environment. A row missing any of them is flagged, and Yett can refuse every call that would use it.',
  },
  approvalModes: {
    word: 'approval modes',
    meaning:
      'How often you approve a credential’s use. Once per agent run: one answer covers that run until it exits or the vault locks. Every call: each request gets its own card. Reads once per run, every write: GET and HEAD go on the run’s approval, every other request gets a card.',
  },
  sessionVsCall: {
    word: 'session and per-call approval',
    meaning:
      'A session approval lets one run of one agent process use Yett; it ends when that process exits, the vault locks or you revoke it, and never carries over to another process. A per-call approval is asked on top of it, for one request, and a session never stands in for it.',
  },
} as const satisfies Record<string, Term>;

export type TermId = keyof typeof GLOSSARY;

export const TERM_IDS = Object.keys(GLOSSARY) as TermId[];

// The only module the UI imports to talk to the Go side. The contract is
// generated from Go and checked by Go tests, so a renamed method, form field
// or view field fails the type check rather than the window at run time:
// - the services' bindings, by Wails (./wailsjs, TestUIContractIsGenerated);
// - one call per bound method (./calls.gen.ts), the views and their closed
//   sets and the forms (./contract.gen.ts), and one on… per event, by
//   app/contract_*_test.go (TestWindowEnumsAreGenerated).
// Every answer and event payload is checked at run time against its view's
// generated description (bridge.ts).
//
// No secret ever comes back through this module: the Go adapter only returns
// redacted views (TestNoViewFieldIsNamedLikeASecret stops a view field named
// like one). The secrets going out are NewCredentialForm.secret, the rotated
// secret, ConnectForm.clientSecret, SSHHostForm.privateKey with its
// passphrase, and the passphrase arguments of the vault's calls.
import type * as V from './contract.gen';
import { BackendError, BackendUnavailableError } from './bridge';

export * from './contract.gen';
export * from './calls.gen';
export {
  BackendError,
  BackendUnavailableError,
  ProtocolError,
  isConnected,
  parseView,
  parseViews,
  waitForBackend,
} from './bridge';

/** The page size the audit views ask for, and the most a reload asks for at once. */
export const AUDIT_PAGE = 100;
export const AUDIT_MAX_PAGE = 1000;

/** The first page of a view, newest first. */
export const FIRST_PAGE: V.PageRequest = { before: 0, limit: AUDIT_PAGE };

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
  const failed = 'Yett could not copy to the clipboard; select the text and copy it instead.';
  if (runtime?.ClipboardSetText) {
    if (await runtime.ClipboardSetText(text)) return;
    throw new BackendError(failed);
  }
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    throw new BackendError(failed);
  }
}

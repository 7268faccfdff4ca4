import { describe, expect, it } from 'vitest';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import App from '../App.svelte';
import { credentialView, installBridge, vaultStatus } from '../test/fakeBridge';
import { importPreview, installImport } from '../test/fakeImport';

const CANARY = 'CANARY-unit-import-' + Math.random().toString(36).slice(2);

/** The Credentials view with one stored credential ("gh"), and the import panel opened. */
async function openImport(preview = importPreview()) {
  const bridge = installBridge(vaultStatus({ state: 'unlocked', epoch: 4 }));
  bridge.credentials.push(credentialView({ name: 'gh' }));
  const imp = installImport(preview);
  render(App);
  await fireEvent.click(await screen.findByTestId('nav-credentials'));
  await fireEvent.click(await screen.findByTestId('credential-import'));
  const panel = await screen.findByTestId('import-panel');
  return { bridge, imp, panel };
}

const entries = () => screen.getAllByTestId('import-entry');
const input = (el: HTMLElement, id: string) => within(el).getByTestId(id) as HTMLInputElement;

describe('credential import', () => {
  it('sends pasted lines once, empties and masks their field, and shows only what the preview names', async () => {
    const { imp } = await openImport();
    await waitFor(() => expect(document.activeElement?.getAttribute('data-testid')).toBe('import-open'));
    const text = screen.getByTestId('import-text') as HTMLTextAreaElement;
    expect(text.classList.contains('masked')).toBe(true);
    await fireEvent.click(screen.getByTestId('import-text-toggle'));
    expect(text.classList.contains('masked')).toBe(false);
    await fireEvent.input(text, { target: { value: `GITHUB_TOKEN=${CANARY}\nbroken` } });
    await fireEvent.click(screen.getByTestId('import-read'));
    await screen.findByTestId('import-preview-title');
    expect(imp.ReadImportText).toHaveBeenCalledTimes(1);
    expect(imp.ReadImportText).toHaveBeenCalledWith(`GITHUB_TOKEN=${CANARY}\nbroken`);
    expect(document.body.innerHTML).not.toContain(CANARY);
    expect(screen.getByTestId('import-preview-title').textContent).toContain('“import.env”: 4 entries, 3 can be imported');
    await waitFor(() => expect(document.activeElement?.getAttribute('data-testid')).toBe('import-preview-title'));

    const [token, broken, gh] = entries();
    expect(token.textContent).toContain('GITHUB_TOKEN');
    expect(token.textContent).toContain('line 1 · text, 40 characters · for api.github.com');
    expect(input(broken, 'import-choose').disabled).toBe(true);
    expect(within(broken).getByTestId('import-problem').textContent).toBe('The line is not KEY=value.');
    expect(within(gh).getByTestId('import-duplicate')).toBeTruthy();
  });

  it('checks the chosen entries as the add form does, and imports them with who answers for them', async () => {
    const { imp, bridge } = await openImport();
    await fireEvent.click(screen.getByTestId('import-open'));
    await screen.findByTestId('import-preview-title');
    const [token, , gh, db] = entries();
    await fireEvent.click(input(token, 'import-choose'));
    await fireEvent.click(input(gh, 'import-choose'));
    await fireEvent.click(input(db, 'import-choose'));
    expect(screen.getByTestId('import-submit').textContent).toContain('Import 3 credentials');
    expect(input(token, 'import-hosts').value).toBe('api.github.com');

    await fireEvent.click(screen.getByTestId('import-submit'));
    expect(imp.ImportCredentials).not.toHaveBeenCalled();
    expect(gh.textContent).toContain('A stored credential is already named “gh”');
    expect(db.textContent).toContain('Name at least one host');
    await waitFor(() => expect(document.activeElement).toBe(input(gh, 'import-name')));

    await fireEvent.input(input(gh, 'import-name'), { target: { value: 'gh-import' } });
    await fireEvent.input(input(gh, 'import-hosts'), { target: { value: 'API.github.com' } });
    await fireEvent.input(input(db, 'import-hosts'), { target: { value: 'db.example.com' } });
    await fireEvent.change(input(db, 'import-format'), { target: { value: 'basic' } });
    await fireEvent.input(input(db, 'import-username'), { target: { value: 'app' } });
    await fireEvent.input(input(db, 'import-paths'), { target: { value: '/v1/' } });
    await fireEvent.click(screen.getByTestId('import-approval-writes'));
    await fireEvent.change(screen.getByTestId('import-rotate-every'), { target: { value: '90' } });
    await fireEvent.click(screen.getByTestId('import-alone'));
    await fireEvent.change(screen.getByTestId('import-environment'), { target: { value: 'production' } });
    const listed = bridge.VaultService.ListCredentials.mock.calls.length;
    await fireEvent.click(screen.getByTestId('import-submit'));

    await screen.findByTestId('import-result-title');
    expect(imp.ImportCredentials).toHaveBeenCalledTimes(1);
    const [id, choices] = imp.ImportCredentials.mock.calls[0];
    expect(id).toBe('import-1');
    const shared = { secret: '', approval: 'writes', rotateEveryDays: 90, owner: 'ana', backupRevoker: 'ana', environment: 'production' };
    const form = { headerName: '', template: '', username: '', pathPrefixes: [] as string[], ...shared };
    expect(choices).toEqual([
      { index: 0, form: { ...form, name: 'GITHUB_TOKEN', format: 'bearer', hosts: ['api.github.com'] } },
      { index: 2, form: { ...form, name: 'gh-import', format: 'bearer', hosts: ['api.github.com'] } },
      { index: 3, form: { ...form, name: 'DB_PASSWORD', format: 'basic', username: 'app', hosts: ['db.example.com'], pathPrefixes: ['/v1/'] } },
    ]);
    expect(screen.getByTestId('import-result-title').textContent).toContain('Imported 3 credentials');
    expect(screen.getAllByTestId('import-added').map((e) => e.textContent)).toEqual(['“GITHUB_TOKEN”', '“gh-import”', '“DB_PASSWORD”']);
    // The list behind the result is read again at once, not only on Done.
    expect(bridge.VaultService.ListCredentials).toHaveBeenCalledTimes(listed + 1);

    await fireEvent.click(screen.getByTestId('import-done'));
    await waitFor(() => expect(screen.queryByTestId('import-panel')).toBeNull());
    expect(screen.getByTestId('credential-added').textContent).toContain('Imported 3 credentials');
    await waitFor(() => expect(document.activeElement?.getAttribute('data-testid')).toBe('credential-import'));
  });

  it('wipes what was read once on Esc or Cancel, and gives focus back to Import', async () => {
    const { imp } = await openImport();
    await fireEvent.click(screen.getByTestId('import-open'));
    await screen.findByTestId('import-preview-title');
    await fireEvent.keyDown(screen.getByTestId('import-preview-title'), { key: 'Escape' });
    await waitFor(() => expect(screen.queryByTestId('import-panel')).toBeNull());
    expect(imp.CancelImport).toHaveBeenCalledTimes(1);
    expect(imp.CancelImport).toHaveBeenCalledWith('import-1');
    await waitFor(() => expect(document.activeElement?.getAttribute('data-testid')).toBe('credential-import'));

    await fireEvent.click(screen.getByTestId('credential-import'));
    await fireEvent.click(await screen.findByTestId('import-open'));
    await screen.findByTestId('import-preview-title');
    await fireEvent.click(screen.getAllByTestId('import-cancel')[0]);
    expect(imp.CancelImport).toHaveBeenCalledTimes(2);
  });

  it('says why nothing was read, in the backend’s words, and refuses an empty paste itself', async () => {
    const { imp } = await openImport();
    await fireEvent.click(screen.getByTestId('import-read'));
    expect(imp.ReadImportText).not.toHaveBeenCalled();
    expect((await screen.findByTestId('import-error')).textContent).toContain('Paste KEY=value lines');

    const encrypted = 'Yett cannot import this: it is an encrypted Bitwarden export, which Yett cannot open.';
    imp.OpenImportFile.mockRejectedValueOnce(encrypted);
    await fireEvent.click(screen.getByTestId('import-open'));
    await waitFor(() => expect(screen.getByTestId('import-error').textContent).toBe(encrypted));
    await waitFor(() => expect(document.activeElement?.getAttribute('data-testid')).toBe('import-error'));

    imp.OpenImportFile.mockResolvedValueOnce({ ...importPreview(), chosen: false, id: '', entries: [] });
    await fireEvent.click(screen.getByTestId('import-open'));
    await waitFor(() => expect(imp.OpenImportFile).toHaveBeenCalledTimes(2));
    expect(screen.queryByTestId('import-preview-title')).toBeNull();
    expect(screen.getByTestId('import-open')).toBeTruthy();
  });

  it('chooses every entry that can be imported at once, and reports what failed', async () => {
    const { imp } = await openImport();
    await fireEvent.click(screen.getByTestId('import-open'));
    await screen.findByTestId('import-preview-title');
    await fireEvent.click(screen.getByTestId('import-all'));
    const chosen = entries().filter((e) => input(e, 'import-choose').checked).length;
    expect(chosen).toBe(3);
    await fireEvent.input(input(entries()[2], 'import-name'), { target: { value: 'gh2' } });
    await fireEvent.input(input(entries()[2], 'import-hosts'), { target: { value: 'api.github.com' } });
    await fireEvent.input(input(entries()[3], 'import-hosts'), { target: { value: 'db.example.com' } });
    imp.ImportCredentials.mockResolvedValueOnce({
      added: [{ index: 0, id: 'c1', name: 'GITHUB_TOKEN', note: '' }],
      failed: [{ index: 3, name: 'DB_PASSWORD', reason: 'Host "db.example.com" is refused.' }],
    });
    await fireEvent.click(screen.getByTestId('import-submit'));
    await screen.findByTestId('import-result-title');
    expect(screen.getByTestId('import-result-title').textContent).toContain('Imported 1 credential; 1 not imported');
    expect(screen.getByTestId('import-failed').textContent).toBe('DB_PASSWORD: Host "db.example.com" is refused.');
  });
});

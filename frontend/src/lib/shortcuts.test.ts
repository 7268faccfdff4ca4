import { describe, expect, it } from 'vitest';
// Vite reads the page as text at build time: no Node API in the test.
import manPage from '../../../build/linux/yett-desktop.1?raw';
import { shortcutHelp } from './shortcuts';

// yett-desktop(1) is generated from Go (app/manpage_test.go); the About
// view from shortcutHelp. Every shortcut the window has is on the page.
describe('the keyboard shortcuts', () => {
  it('are all listed in yett-desktop(1), with what they do', () => {
    const page = manPage.replaceAll('\\-', '-');
    const help = shortcutHelp([]);
    expect(help.length).toBeGreaterThan(5);
    for (const { keys, does } of help) {
      expect(page, `${keys}`).toContain(`.B ${keys}\n${does}.`);
    }
    expect(page).toContain('.B Ctrl+1 ... Ctrl+9');
  });
});

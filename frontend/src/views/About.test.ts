import { describe, expect, it } from 'vitest';
import { render, screen } from '@testing-library/svelte';
import versionFile from '../../../VERSION?raw';
import About from './About.svelte';

describe('About', () => {
  it('shows the version from the VERSION file, as yett --version does', () => {
    render(About);
    expect(versionFile).toMatch(/^\d+\.\d+\.\d+\n$/);
    expect(screen.getByTestId('version').textContent).toBe(`Version ${versionFile.trim()}`);
  });
});

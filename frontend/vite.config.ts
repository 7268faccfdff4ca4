/// <reference types="vitest/config" />
import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { svelteTesting } from '@testing-library/svelte/vite';

// The Go binary embeds frontend/dist and serves it from the root of its own
// asset server; relative asset URLs keep the bundle independent of that root.
export default defineConfig({
  base: './',
  // The About view imports ../VERSION (the one place the version is
  // written): the dev server Vitest runs on may read the repository's files
  // (Vite matches ?raw imports against directories only).
  server: { fs: { allow: ['..'] } },
  plugins: [svelte(), svelteTesting()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Wails' webviews (WebKitGTK 4.1, WebView2, WKWebView) are all current
    // enough for ES2022; no legacy transforms needed.
    target: 'es2022',
  },
  test: {
    environment: 'jsdom',
    include: ['src/**/*.test.ts'],
    setupFiles: ['src/test/setup.ts'],
    restoreMocks: true,
  },
});

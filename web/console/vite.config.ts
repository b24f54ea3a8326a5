// Vite builds the console into dist/ (see build.ts, which also precompresses and stamps it).
// No inline script or style in the output (the server's CSP forbids them), no data: fonts or
// scripts (assets stay files), hashed names under /assets/ (served immutable).

import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

export default defineConfig({
  plugins: [preact({ prerender: { enabled: false } })],
  base: '/',
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    assetsInlineLimit: 0,
    cssCodeSplit: true,
    sourcemap: false,
    target: 'baseline-widely-available',
    reportCompressedSize: false,
  },
});

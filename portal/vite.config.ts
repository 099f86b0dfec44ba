import { defineConfig } from 'vite';

// The page is served by the gateway's portal listener from dist/ (see
// services/gateway/src/portal): no inline script or style, so its policy can be `'self'` only.
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Nothing inlined as data: URLs; every asset is a file under /assets with a content hash.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
});

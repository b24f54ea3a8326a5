// Vite bundles the stylesheet imported for its side effect; TypeScript 6+ checks side-effect
// imports (`noUncheckedSideEffectImports`), so say what a `.css` module is.
declare module '*.css';

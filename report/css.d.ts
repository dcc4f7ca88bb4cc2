/** esbuild bundles CSS imports into the page's stylesheet. */
declare module '*.css';

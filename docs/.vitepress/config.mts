/**
 * The docs site (issue 46): VitePress over `docs/`, with local search and Mermaid diagrams (drawn by
 * theme/mermaid-diagram.ts). `npm run docs:dev`
 * serves it, `npm run docs:build` writes `docs/.vitepress/dist/` and fails on a dead link (VitePress's
 * default, kept: no `ignoreDeadLinks`). The sidebar is built from the files that exist (site-nav.ts).
 */
import type MarkdownIt from 'markdown-it';
import { defineConfig } from 'vitepress';
import { githubSlug } from './github-slug.mts';
import { repositoryLinks } from './repository-links.mts';
import { sidebar } from './site-nav.mts';

export default defineConfig({
  title: 'erp-proxy',
  description: 'One JSON-RPC envelope in front of every Odoo ERP, for services and AI agents',
  lang: 'en',
  // The site's own icon: without one a browser asks for /favicon.ico, a 404 on every first visit.
  head: [['link', { rel: 'icon', type: 'image/svg+xml', href: '/favicon.svg' }]],
  // `docs/openapi.json` and the pages' links to source files are not pages.
  srcExclude: ['**/node_modules/**'],
  lastUpdated: false,
  cleanUrls: false,
  themeConfig: {
    // Local search, with each result's matching text shown (the browser test reads it).
    search: { provider: 'local', options: { detailedView: true } },
    nav: [
      { text: 'Guides', link: '/guide/getting-started' },
      { text: 'Configuration', link: '/reference/configuration' },
      { text: 'Troubleshooting', link: '/troubleshooting' },
      { text: 'Changelog', link: '/changelog' },
    ],
    sidebar: sidebar(),
    outline: { level: [2, 3] },
  },
  markdown: {
    // Anchors as GitHub makes them: the pages' links are written for GitHub.
    anchor: { slugify: githubSlug },
    config: (md) => {
      md.use(repositoryLinks);
      md.use(mermaidFences);
    },
  },
  vite: {
    // Mermaid is large and loaded only where a page has a diagram: no warning for its chunks'
    // size; pre-bundled for `docs:dev` (some of its dependencies are CommonJS).
    build: { chunkSizeWarningLimit: 4096 },
    optimizeDeps: { include: ['mermaid'] },
  },
});

/** A ```mermaid block becomes the theme's `<MermaidDiagram>` (theme/mermaid-diagram.ts). */
function mermaidFences(md: MarkdownIt): void {
  const fence = md.renderer.rules.fence;
  md.renderer.rules.fence = (tokens, index, options, env, self) => {
    const token = tokens[index];
    if (token?.info.trim() === 'mermaid')
      return `<MermaidDiagram code="${encodeURIComponent(token.content)}" />\n`;
    return fence === undefined
      ? self.renderToken(tokens, index, options)
      : fence(tokens, index, options, env, self);
  };
}

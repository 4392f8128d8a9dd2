/**
 * The docs site (issue 46): VitePress over `docs/`, with local search and Mermaid. `npm run docs:dev`
 * serves it, `npm run docs:build` writes `docs/.vitepress/dist/` and fails on a dead link (VitePress's
 * default, kept: no `ignoreDeadLinks`). The sidebar is built from the files that exist (site-nav.ts).
 */
import { defineConfig } from 'vitepress';
import { withMermaid } from 'vitepress-plugin-mermaid';
import { githubSlug } from './github-slug.mts';
import { repositoryLinks } from './repository-links.mts';
import { sidebar } from './site-nav.mts';

export default withMermaid(
  defineConfig({
    title: 'erp-proxy',
    description: 'One JSON-RPC envelope in front of every Odoo ERP, for services and AI agents',
    lang: 'en',
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
      },
    },
    mermaid: { securityLevel: 'strict' },
    // Mermaid is one large chunk, loaded only by a page with a diagram: no warning for its size.
    vite: { build: { chunkSizeWarningLimit: 4096 } },
  }),
);

/**
 * The site's sidebar, built from the Markdown files that exist under `docs/`: each group lists its
 * pages in reading order, a page missing from disk is left out (a page another change adds appears
 * once its file is there), and any page no group names is listed under "More", so none is hidden.
 * A page's title is its first `# ` heading.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const DOCS = fileURLToPath(new URL('..', import.meta.url));

/** The groups of the sidebar and their pages (paths under `docs/`), in reading order. */
export const GROUPS: readonly { readonly text: string; readonly pages: readonly string[] }[] = [
  { text: 'Start', pages: ['index.md', 'concepts.md', 'guide/getting-started.md'] },
  {
    text: 'Guides',
    pages: [
      'guide/calling.md',
      'guide/erp-versions.md',
      'guide/errors.md',
      'guide/retrying-writes.md',
      'guide/limits.md',
      'guide/policies.md',
      'target-policy.md',
      'guide/mcp.md',
      'guide/confirmations.md',
      'guide/oauth.md',
      'guide/audit.md',
    ],
  },
  {
    text: 'Operating',
    pages: [
      'operators.md',
      'operators-license.md',
      'operators-observability.md',
      'deploy-trial.md',
      'deployment.md',
    ],
  },
  {
    text: 'Reference',
    pages: [
      'reference/configuration.md',
      'troubleshooting.md',
      'reference/client.md',
      'reference/mcp-protocol.md',
      'reference/performance.md',
      'reference/benchmarks.md',
      'changelog.md',
    ],
  },
  { text: 'Contributing', pages: ['development.md', 'design.md'] },
];

/** Every Markdown page under `docs/` (paths relative to it), the site's own folder left out. */
export function sitePages(dir = DOCS): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((path) => path.split('\\').join('/'))
    .filter(
      (path) => path.endsWith('.md') && !path.startsWith('.vitepress/') && !path.includes('node_modules/'),
    )
    .sort();
}

/** The first `# ` heading of a page (an included file's, for a page that only includes one). */
export function pageTitle(page: string, dir = DOCS): string {
  const text = readFileSync(join(dir, page), 'utf8');
  const heading = /^##? (.+)$/m.exec(text)?.[1];
  if (heading !== undefined) return heading.replaceAll('`', '');
  const include = /<!--@include: ([^\s]+?)-->/.exec(text)?.[1];
  if (include !== undefined) return pageTitle(relative(dir, join(dir, page, '..', include)), dir);
  return page.replace(/\.md$/, '');
}

/** The sidebar: the groups' pages that exist, then "More" with the pages no group names. */
export function sidebar(dir = DOCS): { text: string; items: { text: string; link: string }[] }[] {
  const item = (page: string) => ({
    text: pageTitle(page, dir),
    link: `/${page.replace(/(^|\/)index\.md$/, '$1').replace(/\.md$/, '')}`,
  });
  const named = new Set(GROUPS.flatMap((group) => group.pages));
  const groups = GROUPS.map((group) => ({
    text: group.text,
    items: group.pages.filter((page) => existsSync(join(dir, page))).map(item),
  }));
  const others = sitePages(dir).filter((page) => !named.has(page));
  return [...groups, ...(others.length > 0 ? [{ text: 'More', items: others.map(item) }] : [])].filter(
    (group) => group.items.length > 0,
  );
}

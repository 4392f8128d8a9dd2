/**
 * Links written for GitHub, made right for the site. The pages are Markdown files of the repository,
 * and their relative links name other files of it: a page under `docs/` stays a page link; the
 * files the site includes (CHANGELOG.md, BENCHMARKS.md, client/README.md, the README) become links
 * to the pages that include them; any other file (source, tests, folders) is not served by the site,
 * so the link keeps its text and loses its target. The text an include brings in is resolved from
 * the included file's own folder (INCLUDED_FROM), as GitHub resolves it.
 */
import { posix } from 'node:path';
import type MarkdownIt from 'markdown-it';

/** Repository files that are pages of the site, and the page (under `docs/`) that shows each. */
export const REPOSITORY_PAGES: Readonly<Record<string, string>> = {
  'README.md': 'docs/index.md',
  'CHANGELOG.md': 'docs/changelog.md',
  'BENCHMARKS.md': 'docs/reference/benchmarks.md',
  'client/README.md': 'docs/reference/client.md',
};

/** Pages whose text is an included file: its links are relative to that file's folder. */
export const INCLUDED_FROM: Readonly<Record<string, string>> = {
  'docs/changelog.md': '',
  'docs/concepts.md': '',
  'docs/reference/benchmarks.md': '',
  'docs/reference/client.md': 'client',
};

/**
 * Where a relative link of `page` (a repository path, `docs/...`) points, for the site: a link
 * relative to the page, or undefined when the target is no page of the site.
 */
export function siteHref(page: string, href: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('#') || href.startsWith('/')) return href;
  const hash = href.indexOf('#');
  const path = hash === -1 ? href : href.slice(0, hash);
  const anchor = hash === -1 ? '' : href.slice(hash);
  const base = INCLUDED_FROM[page] ?? posix.dirname(page);
  const target = posix.normalize(posix.join(base, path));
  const shown = REPOSITORY_PAGES[target] ?? target;
  if (!shown.startsWith('docs/') || !shown.endsWith('.md')) return undefined;
  const relativePath = posix.relative(posix.dirname(page), shown);
  return `${relativePath.startsWith('.') ? relativePath : `./${relativePath}`}${anchor}`;
}

/** The markdown-it plugin: rewrites each relative link before VitePress renders and checks it. */
export function repositoryLinks(md: MarkdownIt): void {
  md.core.ruler.push('repository-links', (state) => {
    const relativePath = (state.env as { relativePath?: string }).relativePath;
    if (relativePath === undefined) return;
    const page = `docs/${relativePath}`;
    for (const token of state.tokens) {
      if (token.children === null) continue;
      const dropped: number[] = [];
      token.children.forEach((child, index) => {
        if (child.type !== 'link_open') return;
        const href = child.attrGet('href');
        if (href === null) return;
        const shown = siteHref(page, href);
        if (shown !== undefined) {
          child.attrSet('href', shown);
          return;
        }
        const close = token.children?.findIndex(
          (other, at) => at > index && other.type === 'link_close' && other.level === child.level,
        );
        if (close !== undefined && close !== -1) dropped.push(index, close);
      });
      if (dropped.length > 0)
        token.children = token.children.filter((_child, index) => !dropped.includes(index));
    }
  });
}

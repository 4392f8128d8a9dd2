/**
 * The README and the docs (issue 46): every relative link of README.md and docs/ resolves (the file
 * exists, and so does the heading an anchor names, as GitHub makes anchors); the README stays a
 * landing page; the picture of a call's path names the gate's checks as docs/design.md's list, the
 * single statement of their order, names them; the site's sidebar shows every page.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { headingAnchors } from '../../docs/.vitepress/github-slug.mts';
import { sidebar, sitePages } from '../../docs/.vitepress/site-nav.mts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

/** README.md and every Markdown page under docs/ (the site's build folders left out). */
const PAGES = ['README.md', ...sitePages().map((page) => `docs/${page}`)];

/** A Markdown text without its fenced code blocks and inline code (links there are not links). */
function prose(markdown: string): string {
  return markdown.replace(/^\s*```[\s\S]*?^\s*```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** The relative and in-page link targets of a Markdown text (inline links and images). */
function relativeLinks(markdown: string): string[] {
  const targets = [...prose(markdown).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map(
    (match) => match[1] ?? '',
  );
  return targets.filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('/'));
}

/** Why the link `target` of `page` does not resolve, or undefined when it does. */
function brokenLink(page: string, target: string): string | undefined {
  const hash = target.indexOf('#');
  const path = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
  const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
  const file = path === '' ? page : normalize(join(dirname(page), path));
  if (file.startsWith('..') || !existsSync(join(ROOT, file))) return `${target}: no file ${file}`;
  if (anchor === undefined || anchor === '') return undefined;
  if (!file.endsWith('.md')) return `${target}: an anchor into a file that is not Markdown`;
  return headingAnchors(read(file)).has(anchor) ? undefined : `${target}: no heading #${anchor} in ${file}`;
}

describe('the links of README.md and docs/', () => {
  it('finds links the way a reader follows them', () => {
    expect(relativeLinks('[a](b.md#c) `[x](y.md)` [e](https://x.org) [f](#g) ![i](j.png "t")')).toEqual([
      'b.md#c',
      '#g',
      'j.png',
    ]);
    expect(headingAnchors('# A `b` c\n## 3. Order of checks\n## A b c\n```\n# not\n```')).toEqual(
      new Set(['a-b-c', '3-order-of-checks', 'a-b-c-1']),
    );
  });

  it.each(PAGES)('%s: every relative and in-page link resolves (file and anchor)', (page) => {
    const broken = relativeLinks(read(page)).flatMap((target) => brokenLink(page, target) ?? []);
    expect(broken).toEqual([]);
  });
});

describe('the README', () => {
  const readme = read('README.md');

  it('is a landing page: at most 300 lines, with a table of contents and a table of the guides', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
    expect(readme).toMatch(/^\*\*Contents\*\*: /m);
    for (const section of ['quick-start', 'concepts', 'guides', 'supported-erps']) {
      expect(readme, section).toContain(`](#${section})`);
    }
    expect(readme).toContain('](CHANGELOG.md)');
    expect(readme).toContain('npm run docs:dev');
  });

  it('explains the license: what it is for, that you issue your own, and the 403 without one', () => {
    expect(readme).toContain('npm run license');
    expect(readme).toContain('](docs/operators-license.md)');
    expect(readme).toMatch(
      /Without a valid license \*\*every execute and version call is answered HTTP 403\*\*/,
    );
  });
});

/** The step names of the first ordered list of docs/design.md's section "Order of checks". */
function orderOfChecks(design: string): string[] {
  const lines = design.split('\n');
  const start = lines.findIndex((line) => /^#{2,3} .*Order of checks/.test(line));
  if (start === -1) throw new Error('docs/design.md has no "Order of checks" section');
  const level = /^#+/.exec(lines[start] ?? '')?.[0].length ?? 2;
  const section: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const heading = /^(#+) /.exec(line);
    if (heading !== null && (heading[1]?.length ?? 0) <= level) break;
    section.push(line);
  }
  const items: string[] = [];
  for (const line of section) {
    const item = /^\d+\.\s+(.*)$/.exec(line);
    if (item === null) {
      if (items.length > 0 && line.trim() !== '' && !/^\s/.test(line)) break;
      continue;
    }
    items.push(stepName(item[1] ?? ''));
  }
  return items;
}

/** A list item's step name: its leading bold or code text, else the text before its first colon. */
function stepName(item: string): string {
  const named = /^\*\*([^*]+)\*\*/.exec(item) ?? /^`([^`]+)`/.exec(item) ?? /^([^:]+):/.exec(item);
  return normalizeStep(named?.[1] ?? item);
}

const normalizeStep = (name: string): string =>
  name.replace(/[`*]/g, '').replace(/[.:]$/, '').replace(/\s+/g, ' ').trim().toLowerCase();

/** The labels of the nodes of the Mermaid diagram's `gate` subgraph, in the order they appear. */
function gateSteps(markdown: string): string[] {
  const diagram = /```mermaid\n([\s\S]*?)```/.exec(markdown)?.[1] ?? '';
  const gate = /^\s*subgraph gate\b.*\n([\s\S]*?)^\s*end\s*$/m.exec(diagram)?.[1] ?? '';
  const labels = new Map<string, string>();
  for (const match of gate.matchAll(/(\w+)\["([^"]+)"\]/g)) {
    if (!labels.has(match[1] ?? '')) labels.set(match[1] ?? '', normalizeStep(match[2] ?? ''));
  }
  return [...labels.values()];
}

describe("the picture of a call's path (README.md, and the site's home page)", () => {
  it("names the gate's checks as docs/design.md lists them, in that order", () => {
    const order = orderOfChecks(read('docs/design.md'));
    expect(order.length).toBeGreaterThanOrEqual(5);
    expect(gateSteps(read('README.md'))).toEqual(order);
  });

  it('is the one the site shows (docs/index.md includes it)', () => {
    expect(read('docs/index.md')).toContain('<!--@include: ../README.md#call-path-->');
    expect(read('README.md')).toMatch(
      /<!-- #region call-path -->\n```mermaid\n[\s\S]*?```\n<!-- #endregion call-path -->/,
    );
  });

  it('reads a list as the design writes it: bold, code or a name before a colon', () => {
    const design =
      '## 3. Order of checks\n\nIntro.\n\n1. **Route and key**: x\n   more\n2. `license`: y\n3. body: z\n\nAfter.\n4. no\n## 4. Next';
    expect(orderOfChecks(design)).toEqual(['route and key', 'license', 'body']);
  });
});

describe('the docs site (docs/.vitepress)', () => {
  it('lists every page of docs/ in its sidebar, once', () => {
    const links = sidebar().flatMap((group) => group.items.map((item) => item.link));
    const pages = sitePages().map(
      (page) => `/${page.replace(/(^|\/)index\.md$/, '$1').replace(/\.md$/, '')}`,
    );
    expect([...links].sort()).toEqual([...pages].sort());
    expect(relative(ROOT, join(ROOT, 'docs'))).toBe('docs');
  });

  it('includes BENCHMARKS.md and CHANGELOG.md where they are, without copying them', () => {
    expect(read('docs/reference/benchmarks.md').trim()).toBe('<!--@include: ../../BENCHMARKS.md-->');
    expect(read('docs/changelog.md').trim()).toBe('<!--@include: ../CHANGELOG.md-->');
    expect(readdirSync(join(ROOT, 'docs')).includes('BENCHMARKS.md')).toBe(false);
  });
});

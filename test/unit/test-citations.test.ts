/**
 * A `test/` path a document or a code comment cites exists: README.md, BENCHMARKS.md, the other
 * Markdown files (docs/, bench/, client/) and every tracked source file (code and comments alike)
 * name test files that a reader can open. CHANGELOG.md is history (a file it names may since
 * have been renamed or removed) and is not checked; nor are the recorded captures (ERP data).
 *
 * A cited path is `test/...` not preceded by a path character (so `client/test/x` and
 * `../test/x` are not read as the root's `test/`); a glob (`test/integration/mcp*.test.ts`) must
 * match a file; a path built in code (`test/live/capture-replay${v}.test.ts`, `test/<name>`) is
 * left alone.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The files read (git's, new ones included): text files but the history and the captures. */
function citingFiles(tracked: readonly string[]): string[] {
  return tracked.filter(
    (path) =>
      (/\.(?:ts|mjs|js|md|ya?ml|sh|py)$/.test(path) || path.startsWith('.ci/')) &&
      path !== 'CHANGELOG.md' &&
      // This file's own examples name files that do not exist, on purpose.
      path !== 'test/unit/test-citations.test.ts' &&
      !path.startsWith('test/erp-double/captures/'),
  );
}

const CITATION = /(?<![\w./@$-])test\/[\w.*/-]*[\w*/]/g;

/**
 * The `test/` paths `text` cites that match nothing in `exists` (a set of the repository's files
 * and folders, `/`-separated, without a trailing slash), each once.
 */
function missingCitations(text: string, exists: ReadonlySet<string>): string[] {
  const missing = new Set<string>();
  for (const match of text.matchAll(CITATION)) {
    const after = text.slice((match.index ?? 0) + match[0].length, (match.index ?? 0) + match[0].length + 2);
    // Built in code or a placeholder: `test/live/capture-replay${v}`, `test/<file>`.
    if (after.startsWith('${') || after.startsWith('<') || after.startsWith('{')) continue;
    const cited = match[0].replace(/\/+$/, '').replace(/\.+$/, '');
    if (cited.includes('*')) {
      const pattern = cited
        .replace(/[.+?^()|[\]\\]/g, '\\$&')
        .split('**/')
        .map((part) => part.replace(/\*/g, '[^/]*'))
        .join('(?:[^/]+/)*');
      const glob = new RegExp(`^${pattern}$`);
      if (![...exists].some((path) => glob.test(path))) missing.add(cited);
    } else if (!exists.has(cited)) {
      missing.add(cited);
    }
  }
  return [...missing];
}

/** Every tracked file and every folder above one. */
function repositoryPaths(tracked: readonly string[]): Set<string> {
  const paths = new Set<string>();
  for (const file of tracked) {
    const parts = file.split('/');
    for (let end = 1; end <= parts.length; end += 1) paths.add(parts.slice(0, end).join('/'));
  }
  return paths;
}

describe('missingCitations', () => {
  const exists = new Set(['test', 'test/unit', 'test/unit/a.test.ts', 'test/integration/mcp-x.test.ts']);

  it('finds a cited test file that does not exist, once', () => {
    expect(
      missingCitations('see `test/unit/b.test.ts` and test/unit/b.test.ts, not test/unit/a.test.ts.', exists),
    ).toEqual(['test/unit/b.test.ts']);
  });

  it('takes folders, globs and sentence punctuation; leaves built paths and other roots alone', () => {
    const text = [
      'test/unit/ and (test/unit/a.test.ts), test/integration/mcp*.test.ts; test/**/*.test.ts',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a template as a comment cites one.
      'client/test/nothing.ts ../test/nothing.ts `test/live/capture-replay${v}.test.ts` test/<name>',
    ].join('\n');
    expect(missingCitations(text, exists)).toEqual([]);
    expect(missingCitations('test/integration/oauth*.test.ts test/gone/', exists)).toEqual([
      'test/integration/oauth*.test.ts',
      'test/gone',
    ]);
  });
});

describe('test/ paths cited by the documents and the code', () => {
  it('all exist (CHANGELOG.md, history, excepted)', () => {
    const tracked = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
      cwd: ROOT,
      encoding: 'utf8',
    })
      .split('\n')
      .filter((path) => path !== '');
    const exists = repositoryPaths(tracked);
    const files = citingFiles(tracked);
    expect(files).toEqual(
      expect.arrayContaining(['README.md', 'BENCHMARKS.md', 'docs/design.md', '.ci/run']),
    );
    const stale = files.flatMap((file) =>
      missingCitations(readFileSync(`${ROOT}${file}`, 'utf8'), exists).map((cited) => `${file}: ${cited}`),
    );
    expect(stale).toEqual([]);
  });
});

describe('documents the code cites', () => {
  it("cite docs/design.md, never DESIGN.md (a maintainer's clone has no ../shared)", () => {
    const tracked = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
      cwd: ROOT,
      encoding: 'utf8',
    })
      .split('\n')
      .filter((path) => /^(?:lambdas|lib|bin|bench|client\/src|test)\/.*\.(?:ts|mjs|js)$/.test(path));
    expect(tracked).toContain('lambdas/core/gate.ts');
    const citing = tracked.filter(
      (path) =>
        path !== 'test/unit/test-citations.test.ts' &&
        /(?<![\w/])DESIGN\.md/.test(readFileSync(`${ROOT}${path}`, 'utf8')),
    );
    expect(citing).toEqual([]);
  });
});

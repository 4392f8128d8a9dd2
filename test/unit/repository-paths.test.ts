/**
 * Every path in the repository must check out on Windows and on case-insensitive file systems
 * (macOS, Windows): no reserved device name (a file named `aux.ts` cannot be created there), no
 * character Windows refuses, and no two paths that differ only by case (one would overwrite the
 * other). The rules are those of Microsoft's "Naming Files, Paths, and Namespaces".
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Device names Windows reserves in every folder, whatever the extension. COM0, LPT0 and the
 * superscript-digit forms are on Microsoft's list too, so they are refused as well.
 */
const RESERVED_DEVICE_NAME = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)$/i;

/**
 * True when Windows reads the path component `name` as a device: the part before the first dot,
 * without the trailing spaces and dots Windows drops, is a reserved name (`aux.test.ts`, `Nul`,
 * `com1.txt`, `lpt9.d.ts`, `CON .txt`).
 */
function isReservedDeviceName(name: string): boolean {
  const stem = name.split('.')[0]!.replace(/[ .]+$/, '');
  return RESERVED_DEVICE_NAME.test(stem);
}

/**
 * Why Windows cannot create the path component `name`, or `undefined` when it can: a character
 * it refuses (`< > : " | ? *`, a control character) or a trailing space or dot, which Windows
 * silently drops (so `a.` and `a` would be one file).
 */
function windowsNameProblem(name: string): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for.
  const bad = /[<>:"|?*\u0000-\u001f]/.exec(name);
  if (bad) return `character ${JSON.stringify(bad[0])} is not allowed on Windows`;
  if (/[ .]$/.test(name)) return 'ends with a space or a dot, which Windows drops';
  if (isReservedDeviceName(name)) return 'is a Windows reserved device name';
  return undefined;
}

/**
 * Groups of paths (files and the folders above them) that differ only by case, each group
 * sorted; one group per lower-cased spelling that has more than one spelling.
 */
function caseCollisions(paths: readonly string[]): string[][] {
  const spellings = new Map<string, Set<string>>();
  for (const path of paths) {
    const parts = path.split('/');
    for (let end = 1; end <= parts.length; end += 1) {
      const prefix = parts.slice(0, end).join('/');
      const key = prefix.toLowerCase();
      const seen = spellings.get(key) ?? new Set<string>();
      seen.add(prefix);
      spellings.set(key, seen);
    }
  }
  return [...spellings.values()].filter((group) => group.size > 1).map((group) => [...group].sort());
}

describe('isReservedDeviceName', () => {
  it.each([
    'aux.test.ts',
    'Nul',
    'com1.txt',
    'lpt9.d.ts',
    'CON',
    'prn.json',
    'AUX.',
    'con .txt',
    'COM9',
    'LPT1',
    'com0',
    'com¹.ts',
    'CONIN$',
    'conout$.log',
  ])('refuses %j', (name) => {
    expect(isReservedDeviceName(name)).toBe(true);
  });

  it.each([
    'auxiliary.ts',
    'com10',
    'console.ts',
    'lpt10.txt',
    'nully',
    'a.aux',
    'my-aux.ts',
    '.con',
    'comx',
    'operator.ts',
  ])('accepts %j', (name) => {
    expect(isReservedDeviceName(name)).toBe(false);
  });
});

describe('windowsNameProblem', () => {
  it.each([
    ['a<b.ts'],
    ['a>b'],
    ['c:d'],
    ['say"hi"'],
    ['pipe|name'],
    ['what?.md'],
    ['star*.ts'],
    ['tab\there'],
    ['nul\u0000byte'],
    ['trailing.'],
    ['trailing '],
    ['aux.ts'],
  ])('refuses %j', (name) => {
    expect(windowsNameProblem(name)).toBeTypeOf('string');
  });

  it.each([['erp-proxy.ts'], ['.gitignore'], ['a b.md'], ['v1.test.ts'], ['CHANGELOG.md']])(
    'accepts %j',
    (name) => {
      expect(windowsNameProblem(name)).toBeUndefined();
    },
  );
});

describe('caseCollisions', () => {
  it('finds files and folders that differ only by case', () => {
    expect(caseCollisions(['README.md', 'readme.md', 'docs/a.md', 'Docs/b.md', 'x/y.ts'])).toEqual([
      ['README.md', 'readme.md'],
      ['Docs', 'docs'],
    ]);
  });

  it('finds nothing when every spelling is unique', () => {
    expect(caseCollisions(['a/b.ts', 'a/c.ts', 'b/b.ts'])).toEqual([]);
  });
});

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** The repository's files (tracked, and new ones not ignored), or why they cannot be listed. */
function listRepositoryPaths(): { paths: string[] } | { skip: string } {
  try {
    const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      cwd: repoRoot,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return { paths: [...new Set(out.split('\0').filter((path) => path !== ''))] };
  } catch (error) {
    return { skip: `git ls-files failed (no git, or not a git checkout): ${(error as Error).message}` };
  }
}

const listing = listRepositoryPaths();

describe('repository paths', () => {
  if ('skip' in listing) {
    it.skip(listing.skip, () => {});
    return;
  }
  const { paths } = listing;

  it('lists the repository (sanity check)', () => {
    expect(paths).toContain('package.json');
  });

  it('has no path component Windows cannot create (device names, refused characters)', () => {
    const problems: string[] = [];
    for (const path of paths) {
      for (const part of path.split('/')) {
        const problem = windowsNameProblem(part);
        if (problem) problems.push(`${path}: ${JSON.stringify(part)} ${problem}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('has no two paths that differ only by case', () => {
    expect(caseCollisions(paths)).toEqual([]);
  });
});

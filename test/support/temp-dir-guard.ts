/**
 * Tests clean up their temporary folders. Loaded before every test file (vitest `setupFiles`):
 * the file gets a temporary directory of its own (`TMPDIR`, so `os.tmpdir()` in the file and in
 * every process it starts with the environment is that folder), and after its tests, whatever
 * is left there fails the file, named; the folder goes either way.
 *
 * The compile caches of tsx (`tsx-<uid>`, whose place no setting changes: `os.tmpdir()`) and
 * Node (`node-compile-cache`, Node 22 and later) are shared by runs, as in the usual temporary
 * directory: each is a symbolic link in the file's folder to the same folder in the usual
 * temporary directory, so a process a test starts with tsx finds what earlier ones compiled
 * instead of compiling every file again. Removing the file's folder removes the links, never the
 * caches; a cache written into the file's folder itself (the link replaced) is a leftover.
 */
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect } from 'vitest';

/** tsx's cache folder name (its `tsx-${geteuid()}`, the user's name where there is no uid). */
const TSX_CACHE = `tsx-${process.geteuid?.() ?? userInfo().username}`;
/** Node's module compile cache (`module.enableCompileCache()` without a folder; TypeScript's `tsc` turns it on). */
const NODE_CACHE = 'node-compile-cache';
const SHARED_CACHES = [TSX_CACHE, NODE_CACHE] as const;

const previous = process.env.TMPDIR;
const usual = tmpdir();
const dir = mkdtempSync(join(usual, 'erp-proxy-test-'));
for (const cache of SHARED_CACHES) {
  const shared = join(usual, cache);
  mkdirSync(shared, { recursive: true });
  symlinkSync(shared, join(dir, cache), 'dir');
}
process.env.TMPDIR = dir;

/** Whether `name` in the file's folder is still the link to its shared cache. */
function sharedCacheLink(name: string): boolean {
  return (SHARED_CACHES as readonly string[]).includes(name) && lstatSync(join(dir, name)).isSymbolicLink();
}

afterAll(() => {
  const left = readdirSync(dir).filter((name) => !sharedCacheLink(name));
  rmSync(dir, { recursive: true, force: true });
  if (previous === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = previous;
  expect(left, 'temporary folders or files this test file left behind (remove them after the test)').toEqual(
    [],
  );
});

/**
 * Tests clean up their temporary folders. Loaded before every test file (vitest `setupFiles`):
 * the file gets a temporary directory of its own (`TMPDIR`, so `os.tmpdir()` in the file and in
 * every process it starts with the environment is that folder), and after its tests, whatever
 * is left there fails the file, named; the folder goes either way. Kept: the compile caches of
 * tsx (`tsx-<uid>`) and Node (`node-compile-cache`), which the processes a test starts share, as
 * in the usual temporary directory.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect } from 'vitest';

/**
 * What may stay behind: caches shared by runs, not a test's own folder: tsx's, and Node's module
 * compile cache (Node 22 and later, which TypeScript's `tsc` turns on; seen on Node 24).
 */
const KEPT = /^(?:tsx-\d+|node-compile-cache)$/;

const previous = process.env.TMPDIR;
const dir = mkdtempSync(join(tmpdir(), 'erp-proxy-test-'));
process.env.TMPDIR = dir;

afterAll(() => {
  const left = readdirSync(dir).filter((name) => !KEPT.test(name));
  rmSync(dir, { recursive: true, force: true });
  if (previous === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = previous;
  expect(left, 'temporary folders or files this test file left behind (remove them after the test)').toEqual(
    [],
  );
});

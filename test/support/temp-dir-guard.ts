/**
 * Tests clean up their temporary folders. Loaded before every test file (vitest `setupFiles`):
 * the file gets a temporary directory of its own (`TMPDIR`, so `os.tmpdir()` in the file and in
 * every process it starts with the environment is that folder), and after its tests, whatever
 * is left there fails the file, named; the folder goes either way. Kept: tsx's compile cache
 * (`tsx-<uid>`), which the scripts a test starts with tsx share, as in the usual temporary
 * directory.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect } from 'vitest';

/** What may stay behind: a cache shared by runs, not a test's own folder. */
const KEPT = /^tsx-\d+$/;

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

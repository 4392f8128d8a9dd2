/**
 * What git must never take from a working copy (.gitignore): the license signing key and the
 * licenses issued with it, where docs/deploy-trial.md and `npm run license -- keygen` put them, so
 * one `git add -A` cannot commit the key (issue 59). And nothing of the project's own sources.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Whether git ignores `path` (relative to the repository), whether or not it exists. */
function ignored(path: string): boolean {
  try {
    execFileSync('git', ['check-ignore', '-q', '--no-index', path], { cwd: ROOT, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('.gitignore', () => {
  it('keeps the license signing key and issued licenses out of git, wherever the guides put them', () => {
    for (const path of [
      'license-keys/license-private.pem',
      'license-keys/license-public.pem',
      'license-private.pem',
      'license.json',
      'deploy/license-private.pem',
    ])
      expect(ignored(path), path).toBe(true);
  });

  it("ignores none of the project's own license code or its tests", () => {
    for (const path of [
      'lambdas/platform/license.ts',
      'lambdas/operator/license-cli.ts',
      'docs/operators-license.md',
      'test/unit/license.test.ts',
    ])
      expect(ignored(path), path).toBe(false);
  });
});

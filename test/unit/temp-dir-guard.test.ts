/**
 * The per-file temporary directory of test/support/temp-dir-guard.ts: a process the test starts
 * with tsx compiles into the shared tsx cache (a link to the usual temporary directory's), not
 * into the file's own folder, so the next file's processes find it; nothing else appears there.
 */
import { execFileSync } from 'node:child_process';
import { lstatSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';

const TSX_CACHE = `tsx-${process.geteuid?.() ?? userInfo().username}`;

describe('the temporary directory of a test file', () => {
  it('is its own, and a tsx process started in it compiles into the shared tsx cache', () => {
    const own = tmpdir();
    expect(own).toMatch(/erp-proxy-test-[^/]+$/);
    const script = join(own, 'probe.ts');
    writeFileSync(script, 'const answer: number = 42;\nconsole.log(answer);\n');
    try {
      const printed = execFileSync(process.execPath, ['--import', 'tsx', script], {
        env: { ...process.env, TMPDIR: own },
        encoding: 'utf8',
      });
      expect(printed.trim()).toBe('42');
    } finally {
      rmSync(script, { force: true });
    }
    const link = join(own, TSX_CACHE);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    // The cache lives beside the file's folder, in the usual temporary directory, and holds files.
    expect(realpathSync(link)).toBe(realpathSync(join(dirname(own), TSX_CACHE)));
    expect(readdirSync(link).length).toBeGreaterThan(0);
    expect(readdirSync(own).filter((name) => !lstatSync(join(own, name)).isSymbolicLink())).toEqual([]);
  });
});

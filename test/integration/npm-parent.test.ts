/**
 * bin/npm-parent.ts: a local server npm started stops when npm's script shell goes, even when the
 * shell went before the server armed the watch (npm killed right after the server's ready line:
 * seen in CI, the ERP double's port still bound 20 s later). The shell here is a real `sh -c` that
 * waits for its node child, killed the way npm's SIGTERM leaves it: gone, its child orphaned.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const NPM_PARENT = fileURLToPath(new URL('../../bin/npm-parent.ts', import.meta.url));

// Imports the module (which notes its parent), then waits until that parent has gone, and only
// then arms the watch; a server that stays up prints "still running" after 8 s.
const SCRIPT = `
  const { stopWhenNpmGoes } = await import(${JSON.stringify(NPM_PARENT)});
  const parent = process.ppid;
  process.stdout.write('imported\\n');
  await new Promise((gone) => {
    const poll = setInterval(() => {
      if (process.ppid !== parent) { clearInterval(poll); gone(); }
    }, 20);
  });
  stopWhenNpmGoes('npm-parent-test', () => { process.stdout.write('stopped\\n'); process.exit(0); });
  setInterval(() => {}, 1000);
  setTimeout(() => { process.stdout.write('still running\\n'); process.exit(3); }, 8000);
`;

describe('stopWhenNpmGoes', () => {
  it('stops at once when the parent has already gone as it is armed', { timeout: 30_000 }, async () => {
    // `; true` keeps sh from exec-ing node: sh is node's parent, as under npm.
    const shell = spawn(
      'sh',
      ['-c', `"${process.execPath}" --import tsx --input-type=module -e "$SCRIPT"; true`],
      {
        env: { ...process.env, SCRIPT, npm_lifecycle_event: 'npm-parent-test' },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let output = '';
    const closed = new Promise<void>((done) => shell.stdout.on('close', done));
    await new Promise<void>((imported, failed) => {
      shell.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
        if (output.includes('imported\n')) imported();
      });
      shell.once('exit', () => failed(new Error(`the shell ended first: ${output}`)));
    });
    shell.kill('SIGKILL');
    await closed;
    expect(output).toBe('imported\nstopped\n');
  });
});

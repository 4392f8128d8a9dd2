/**
 * `npm start` stops when its npm process is signalled: `kill <npm's pid>` (SIGTERM) used to end npm
 * and its script shell and leave the server listening, orphaned. The test starts `npm start` on a
 * free port in a process group of its own, kills npm's pid only, and waits for the port to be
 * free; whatever is left of the group is killed at the end, so a failure leaves nothing behind.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../support/proxy-harness.ts';
import { eventually } from '../support/scripts.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Whether something accepts connections on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('npm start', () => {
  let npm: ChildProcess | undefined;
  afterEach(() => {
    // The whole group this test started (npm, its shell, the server), if anything is left.
    if (npm?.pid !== undefined) {
      try {
        process.kill(-npm.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    npm = undefined;
  });

  it("stops listening when npm's own pid is killed (SIGTERM)", async () => {
    const port = await freePort();
    const child = spawn('npm', ['start', '--silent'], {
      cwd: root,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        PROXY_API_KEY: 'npm-start-test-key-0123',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    npm = child;
    let stdout = '';
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
        if (/_\/about\n/.test(stdout)) resolve();
      });
      child.once('exit', (code) =>
        reject(new Error(`npm start exited (${code}) before it was ready:\n${stderr}`)),
      );
    });
    expect(stdout).toContain(`erp-proxy listening on http://127.0.0.1:${port}`);
    expect(await listening(port)).toBe(true);

    process.kill(child.pid as number, 'SIGTERM');

    // Up to 20 s on a loaded machine (it takes about a second).
    expect(await eventually(async () => !(await listening(port)), 80, 250), 'the port is still in use').toBe(
      true,
    );
  });
});

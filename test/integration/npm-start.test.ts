/**
 * The local servers npm starts stop when their npm process is signalled: `kill <npm's pid>`
 * (SIGTERM) used to end npm and its script shell and leave the server listening, orphaned, its
 * port bound (`npm start` until issue 41; `npm run erp-double` and `npm run oauth:try-out` until
 * issue 45). Each test starts its script on a free port in a process group of its own, kills npm's
 * pid only, and waits for the port to be free; whatever is left of the group is killed at the end,
 * so a failure leaves nothing behind. `npm run oauth:try-out -- --help` prints its options and
 * starts nothing.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { TRY_OUT_USAGE } from '../../bin/oauth-try-out.ts';
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

/** Who listens on `port` (`ss`'s line, process included), for a failure's message. */
async function portHolder(port: number): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)('ss', ['-Hltnp', `sport = :${port}`], { timeout: 5_000 });
    return stdout.trim() || 'no listener in ss';
  } catch (error) {
    return `unknown (ss: ${error instanceof Error ? error.message : String(error)})`;
  }
}

/** One npm script that serves on a port: how to start it there, and what it prints once it listens. */
interface NpmServer {
  readonly args: (port: number) => readonly string[];
  readonly env: (port: number) => Record<string, string>;
  readonly ready: RegExp;
  readonly listening: (port: number) => string;
}

const SERVERS: Readonly<Record<string, NpmServer>> = {
  'npm start': {
    args: () => ['start', '--silent'],
    env: (port) => ({ PORT: String(port), HOST: '127.0.0.1', PROXY_API_KEY: 'npm-start-test-key-0123' }),
    ready: /_\/about\n/,
    listening: (port) => `erp-proxy listening on http://127.0.0.1:${port}`,
  },
  'npm run erp-double': {
    args: () => ['run', '--silent', 'erp-double'],
    env: (port) => ({ ERP_DOUBLE_PORT: String(port) }),
    ready: /-d '[^']*'\n/,
    listening: (port) => `listening on http://127.0.0.1:${port}`,
  },
  'npm run oauth:try-out': {
    args: (port) => ['run', '--silent', 'oauth:try-out', '--', '--port', String(port)],
    env: () => ({}),
    ready: /opens the login page in your browser\.\n/,
    listening: (port) => `Development authorization server (issuer) on http://127.0.0.1:${port}`,
  },
};

describe.each(Object.keys(SERVERS))('%s', (name) => {
  const server = SERVERS[name] as NpmServer;
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

  it("stops listening when npm's own pid is killed (SIGTERM)", { timeout: 60_000 }, async () => {
    const port = await freePort();
    const child = spawn('npm', [...server.args(port)], {
      cwd: root,
      env: { ...process.env, ...server.env(port) },
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
        if (server.ready.test(stdout)) resolve();
      });
      child.once('exit', (code) =>
        reject(new Error(`${name} exited (${code}) before it was ready:\n${stderr}`)),
      );
    });
    expect(stdout).toContain(server.listening(port));
    expect(await listening(port)).toBe(true);

    process.kill(child.pid as number, 'SIGTERM');

    // Up to 20 s on a loaded machine (it takes about a second).
    const freed = await eventually(async () => !(await listening(port)), 80, 250);
    expect(freed, freed ? '' : `the port is still in use, by: ${await portHolder(port)}`).toBe(true);
  });
});

describe('npm run oauth:try-out -- --help', () => {
  it('prints its options, --port among them, and exits without listening', { timeout: 60_000 }, async () => {
    const { stdout } = await promisify(execFile)(
      'npm',
      ['run', '--silent', 'oauth:try-out', '--', '--help'],
      {
        cwd: root,
      },
    );
    expect(stdout).toBe(TRY_OUT_USAGE);
    expect(stdout).toMatch(/--port <port>\s+the port it listens on \(default 8790/);
  });

  it('refuses an option it does not know (exit 2), naming it, with the usage', {
    timeout: 60_000,
  }, async () => {
    const failure = await promisify(execFile)(
      'npm',
      ['run', '--silent', 'oauth:try-out', '--', '--prot', '1'],
      {
        cwd: root,
      },
    ).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failure?.code).toBe(2);
    expect(failure?.stderr).toContain("Unknown option '--prot'");
    expect(failure?.stderr).toContain(TRY_OUT_USAGE);
  });
});

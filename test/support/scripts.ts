/**
 * Repository scripts run as users run them: real processes (`tsx`, or a shell for printed
 * commands), loopback only, each stopped by its own process handle.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** A running script and what it printed so far. */
export interface Script {
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Stops it (SIGTERM to its own pid) and waits until its output is all read. */
  readonly stop: () => Promise<void>;
}

/**
 * Starts `command` in the repository; resolves once stdout matches `ready`, rejects with its
 * exit code and stderr when it exits before.
 */
export function startProcess(
  command: string,
  args: readonly string[],
  env: Record<string, string | undefined>,
  ready: RegExp,
): Promise<Script> {
  const child: ChildProcess = spawn(command, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const script: Script = {
    stdout: () => stdout,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await closed;
    },
  };
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      if (ready.test(stdout)) resolve(script);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.once('exit', (code) =>
      closed.then(() =>
        reject(new Error(`${command} ${args.join(' ')} exited (${code}) before it was ready:\n${stderr}`)),
      ),
    );
  });
}

/** Starts a repository script with tsx, as `npm start` does; resolves once stdout matches `ready`. */
export function startScript(
  file: string,
  env: Record<string, string | undefined>,
  ready: RegExp,
): Promise<Script> {
  return startProcess(process.execPath, ['--import', 'tsx', file], env, ready);
}

/** How a process that ran to its end ended. */
export interface Finished {
  /** The exit code, or `null` when a signal ended it. */
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `command` in the repository to its end, with stdin closed; kills it (SIGKILL, its own pid)
 * when it takes longer than `timeoutMs`, which rejects.
 */
export function runToExit(
  command: string,
  args: readonly string[],
  env: Record<string, string | undefined>,
  timeoutMs = 60_000,
): Promise<Finished> {
  const child = spawn(command, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} ran longer than ${timeoutMs} ms:\n${stderr}`));
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Polls until `check` is true, at most `attempts` times, `everyMs` apart; the last answer. */
export async function eventually(
  check: () => Promise<boolean>,
  attempts: number,
  everyMs: number,
): Promise<boolean> {
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return check();
}

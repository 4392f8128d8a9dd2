/**
 * Several local proxies, each its own Node process running `bin/serve.ts` (what `npm start`
 * runs), as several Lambda instances of one function would run: no memory shared between them,
 * only what they share through the environment (a DynamoDB Local table: test/support/state-table.ts).
 * A process can be stopped gently or killed (SIGKILL) in the middle of a call, as Lambda ends an
 * instance that times out or runs out of memory. Free of vitest, so the benchmarks can use it.
 *
 *   const procs = await startProxyProcesses(3, { ...state.env(), PROXY_API_KEYS: ... });
 *   await procs[0].post('/api/erp/execute', body, { 'idempotency-key': 'k1' });
 *   procs[1].kill();
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort, type HttpAnswer, toAnswer } from './proxy-harness.ts';
import { TEST_PROXY_KEY } from './test-secrets.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface ProxyProcess {
  readonly url: string;
  readonly pid: number;
  /** Everything the process wrote to stdout and stderr so far (its log lines). */
  output(): string;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<HttpAnswer>;
  get(path: string, headers?: Record<string, string>): Promise<HttpAnswer>;
  /** Ends the process at once (SIGKILL), as Lambda ends an instance: nothing of it runs afterwards. */
  kill(): Promise<void>;
  /** Asks the process to stop (SIGTERM) and waits for it. */
  stop(): Promise<void>;
}

/** Starts one `bin/serve.ts` process with `env` on top of the test defaults; resolves once it listens. */
export async function startProxyProcess(env: Record<string, string> = {}): Promise<ProxyProcess> {
  const port = await freePort();
  // Node itself with tsx as a loader (not the `tsx` command, which runs the server in a child
  // process of its own: killing it would leave the server running).
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'bin/serve.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PROXY_API_KEY: TEST_PROXY_KEY,
      LOG_LEVEL: 'INFO',
      ...env,
      HOST: '127.0.0.1',
      PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`proxy process did not listen within 30 s:\n${output}`)),
      30_000,
    );
    const onData = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      if (output.includes(`erp-proxy listening on ${url}`)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`proxy process exited (code ${code}) before listening:\n${output}`));
    });
  });
  const running = (): boolean => child.exitCode === null && child.signalCode === null;
  const send = async (path: string, init: RequestInit): Promise<HttpAnswer> =>
    toAnswer(await fetch(`${url}${path}`, init));
  return {
    url,
    pid: child.pid ?? -1,
    output: () => output,
    post: (path, body, headers = {}) =>
      send(path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': TEST_PROXY_KEY, ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    get: (path, headers = {}) => send(path, { headers }),
    async kill() {
      if (running()) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (running()) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Starts `count` processes with the same environment (in parallel). */
export async function startProxyProcesses(
  count: number,
  env: Record<string, string> = {},
): Promise<ProxyProcess[]> {
  const started = await Promise.allSettled(Array.from({ length: count }, () => startProxyProcess(env)));
  const failed = started.find((result) => result.status === 'rejected');
  if (failed === undefined)
    return started.map((result) => (result as PromiseFulfilledResult<ProxyProcess>).value);
  // One did not start: stop the others rather than leave them running.
  await Promise.all(
    started.flatMap((result) => (result.status === 'fulfilled' ? [result.value.stop()] : [])),
  );
  throw (failed as PromiseRejectedResult).reason;
}

/**
 * The multi-process harness (test/support/proxy-processes.ts): several `bin/serve.ts` processes,
 * each its own Node process, all pointed at one DynamoDB Local table, as Lambda instances share
 * the stack's table; one can be killed in the middle of its work.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ProxyProcess, startProxyProcesses } from '../support/proxy-processes.ts';
import { useStateTable } from '../support/state-table.ts';

const state = useStateTable('procs');

describe('several proxy processes on one table', () => {
  let procs: ProxyProcess[] = [];

  beforeAll(async () => {
    procs = await startProxyProcesses(2, state.env());
  }, 60_000);

  afterAll(async () => {
    await Promise.all(procs.map((proc) => proc.stop()));
  });

  it('are separate processes that each answer', async () => {
    expect(new Set(procs.map((proc) => proc.pid)).size).toBe(2);
    for (const proc of procs) expect((await proc.get('/_/about')).status).toBe(200);
  });

  it('can lose one process at once (SIGKILL) while the other keeps answering', async () => {
    const [doomed, survivor] = procs as [ProxyProcess, ProxyProcess];
    await doomed.kill();
    await expect(doomed.get('/_/about')).rejects.toThrow();
    expect((await survivor.get('/_/about')).status).toBe(200);
  });
});

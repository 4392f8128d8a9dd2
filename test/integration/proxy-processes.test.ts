/**
 * Several proxy processes on one DynamoDB Local table, as Lambda instances share the stack's table
 * (test/support/proxy-processes.ts: each `bin/serve.ts` its own Node process, nothing shared but the
 * table): one `Idempotency-Key` sent to all of them at once runs once; a process killed (SIGKILL)
 * in the middle of a keyed write leaves a record the others answer -32010 while its lease lasts,
 * then "outcome unknown" (-32003), never running the call again.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LEASE_MARGIN_MS } from '../../lambdas/core/idempotency.ts';
import { ERP_A_ADMIN_KEY, type ErpDouble, startErpDouble } from '../erp-double/index.ts';
import { type ErpFront, startErpFront } from '../support/erp-front.ts';
import type { Envelope } from '../support/fixtures.ts';
import { type ProxyProcess, startProxyProcesses } from '../support/proxy-processes.ts';
import { useStateTable } from '../support/state-table.ts';

const state = useStateTable('procs');

let double: ErpDouble;
let front: ErpFront;
let procs: ProxyProcess[] = [];

function create(name: string, id: string): Record<string, unknown> {
  return {
    id,
    action: 'create',
    model_id: 'res.partner',
    params: [{ name }],
    erp_instance: { url: front.url, db: 'erp_a', user_id: 2, api_key: ERP_A_ADMIN_KEY },
  };
}

beforeAll(async () => {
  double = await startErpDouble({ mode: '19' });
  front = await startErpFront(double.url);
  procs = await startProxyProcesses(3, state.env());
}, 60_000);

afterAll(async () => {
  await Promise.all(procs.map((proc) => proc.stop()));
  await front?.close();
  await double?.close();
});

beforeEach(() => {
  front.plan = () => 'forward';
  front.calls.length = 0;
});

describe('several proxy processes on one table', () => {
  it('are separate processes that each answer, and say their state is in DynamoDB', async () => {
    expect(new Set(procs.map((proc) => proc.pid)).size).toBe(3);
    for (const proc of procs) {
      const about = await proc.get('/_/about');
      expect(about.status).toBe(200);
      expect((about.json as { state_store: string }).state_store).toBe('dynamodb');
    }
  });

  it('run one key sent to all of them at once exactly once; each replays the same answer afterwards', async () => {
    front.plan = () => ({ delayMs: 800 });
    const key = `procs-${Date.now()}`;
    const answers = await Promise.all(
      procs.map((proc, i) =>
        proc.post('/api/erp/execute', create('Many Instances Co', `p${i}`), { 'idempotency-key': key }),
      ),
    );
    // One ran; each other was either refused while it ran (-32010) or, on a slow machine, came
    // after it and was replayed.
    const ranAnswers = answers.filter(
      (answer) => answer.status === 200 && !answer.headers.has('idempotent-replayed'),
    );
    expect(ranAnswers).toHaveLength(1);
    for (const other of answers.filter((answer) => !ranAnswers.includes(answer))) {
      if (other.status === 409) expect((other.json as Envelope).error?.code).toBe(-32010);
      else expect(other.headers.get('idempotent-replayed')).toBe('true');
    }
    expect(front.executeCalls()).toHaveLength(1);
    const ran = ranAnswers[0]?.json as Envelope;
    front.plan = () => 'forward';
    for (const [i, proc] of procs.entries()) {
      const replay = await proc.post('/api/erp/execute', create('Many Instances Co', `r${i}`), {
        'idempotency-key': key,
      });
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.json).toEqual({ ...ran, id: `r${i}` });
    }
    expect(front.executeCalls()).toHaveLength(1);
  });

  it('never run again a keyed write whose process was killed mid-call: -32010 during its lease, then outcome unknown', async () => {
    const [doomed, survivor] = procs.slice(1) as [ProxyProcess, ProxyProcess];
    front.plan = () => 'hang';
    const key = `killed-${Date.now()}`;
    const startedAt = Date.now();
    const dying = doomed
      .post('/api/erp/execute', create('Killed Co', 'k1'), {
        'idempotency-key': key,
        'x-request-timeout': '2',
      })
      .catch((error: unknown) => error);
    while (front.executeCalls().length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    await doomed.kill();
    expect(await dying).toBeInstanceOf(Error);
    front.plan = () => 'forward';
    const during = await survivor.post('/api/erp/execute', create('Killed Co', 'k2'), {
      'idempotency-key': key,
    });
    expect(during.status).toBe(409);
    expect((during.json as Envelope).error?.code).toBe(-32010);
    // The lease: the 2 s ERP deadline and the margin to record an answer.
    const leaseEnds = startedAt + 2_000 + LEASE_MARGIN_MS + 250;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, leaseEnds - Date.now())));
    const after = await survivor.post('/api/erp/execute', create('Killed Co', 'k3'), {
      'idempotency-key': key,
    });
    expect(after.status).toBe(504);
    expect(after.headers.get('idempotent-replayed')).toBe('true');
    const error = (after.json as Envelope).error;
    expect(error?.code).toBe(-32003);
    expect(error?.message).toMatch(/did not finish.*outcome is unknown/);
    expect(front.executeCalls()).toHaveLength(1);
  }, 30_000);
});

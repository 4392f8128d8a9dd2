/**
 * A write that never left the proxy is never "may have run" (issue 56, item 9), against a
 * DynamoDB Local of its own that the test freezes (SIGSTOP) and thaws: a keyed write sent while the
 * store is frozen is refused -32004 and not run, yet its claim reaches the store late, when it
 * thaws. Retries with the same key are answered -32004 (the store's pause) or -32010 (the claim's
 * lease), never -32003 "outcome unknown"; once the lease has passed, a retry takes the claim over
 * and runs the write, once; the next retry replays it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErpDouble } from '../erp-double/index.ts';
import {
  createStateTable,
  type DynamoDbLocal,
  localClient,
  startDynamoDbLocal,
  stateTableEnv,
} from '../support/dynamodb-local.ts';
import { type Envelope, USERS, useErpDouble, withProxy } from '../support/fixtures.ts';

const admin = USERS.adminA;

/** The creates the double received (JSON-2). */
const creates = (double: ErpDouble): number =>
  double.requests.filter((request) => /\/json\/2\/res\.partner\/create$/.test(request.path)).length;

describe('a keyed write refused while the store was frozen', () => {
  const double = useErpDouble({ mode: '19' });
  let dynamo: DynamoDbLocal | undefined;
  let table = '';
  beforeAll(async () => {
    dynamo = await startDynamoDbLocal();
    table = await createStateTable(dynamo.endpoint, 'sent');
  }, 90_000);
  afterAll(async () => dynamo?.stop());

  it('runs once when retried with its key after the claim\'s lease, never "outcome unknown"', async () => {
    const store = dynamo as DynamoDbLocal;
    await withProxy({ env: stateTableEnv(store.endpoint, table) }, async (proxy) => {
      double.reset();
      const send = async (id = 'sent') => {
        const answer = await proxy.post(
          '/v2/erp/execute',
          {
            id,
            erp_instance: { url: double.url, db: 'erp_a', api_key: admin.apiKey },
            model_id: 'res.partner',
            method: 'create',
            kwargs: { vals_list: [{ name: 'Sent once' }] },
          },
          // A lease of 1 s (the upstream budget) and its margin: the retry can take over soon.
          { 'idempotency-key': 'frozen-store-1', 'x-request-timeout': '1' },
        );
        const body = answer.json as Envelope;
        return { status: answer.status, code: body?.error?.code ?? undefined, body, headers: answer.headers };
      };
      store.pause();
      let first: Awaited<ReturnType<typeof send>>;
      try {
        first = await send();
      } finally {
        store.resume();
      }
      expect(first.code).toBe(-32004);
      expect(creates(double)).toBe(0);
      // Its claim, sent while the store was frozen, lands now: in progress, never marked sent.
      const claims = async () => {
        const scanned = (await localClient(store.endpoint).send('Scan', { TableName: table })) as {
          Items?: Record<string, { S?: string; BOOL?: boolean }>[];
        };
        return (scanned.Items ?? []).filter((item) => item.pk?.S?.startsWith('idem#'));
      };
      await expect
        .poll(claims, { interval: 100, timeout: 10_000 })
        .toEqual([expect.objectContaining({ st: { S: 'in-progress' }, snt: { BOOL: false } })]);
      const seen: (number | undefined)[] = [];
      let served: Awaited<ReturnType<typeof send>> | undefined;
      const deadline = Date.now() + 30_000;
      while (served === undefined && Date.now() < deadline) {
        const retry = await send();
        if (retry.status === 200 && retry.code === undefined) served = retry;
        else {
          seen.push(retry.code);
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      }
      expect(served?.body.result).toEqual(expect.any(Array));
      expect(
        seen.every((code) => code === -32004 || code === -32010),
        JSON.stringify(seen),
      ).toBe(true);
      expect(creates(double)).toBe(1);
      const replay = await send('sent-again');
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(creates(double)).toBe(1);
    });
  }, 90_000);
});

/**
 * Writes you can retry (issue 39; README, "Retrying writes safely"), over real HTTP: the local
 * server in front of the ERP double (behind a fault front that counts the ERP calls, slows or
 * hangs them), its state in Amazon's DynamoDB Local. At most once per key and caller: replays (v1
 * and v2) with the new `id` and `Idempotent-Replayed`, -32011 for another request, -32010 while the
 * first runs, -32003 kept and never re-run, -32004 and ERP errors re-run, two callers with one key,
 * the store down, a record past its TTL, a narrowed policy refused before any replay.
 */
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { recordKeyOf } from '../../lambdas/core/idempotency.ts';
import { STORE_KEY_PREFIX, type StateStore } from '../../lambdas/platform/state/state-store.ts';
import { STORE_DOWN_PAUSE_MS } from '../../lambdas/platform/state/state-store-dynamodb.ts';
import { ERP_A_ADMIN_KEY, type ErpDouble, startErpDouble } from '../erp-double/index.ts';
import { localClient } from '../support/dynamodb-local.ts';
import { type ErpFront, startErpFront } from '../support/erp-front.ts';
import type { Envelope } from '../support/fixtures.ts';
import { type HttpAnswer, type ProxyHarness, startProxy } from '../support/proxy-harness.ts';
import { useStateTable } from '../support/state-table.ts';

const state = useStateTable('idem');

const BILLING_KEY = 'billing-key-0123456789';
const CRM_KEY = 'crm-key-0123456789abcd';
const KEYS = JSON.stringify({
  keys: [
    { name: 'billing', key: BILLING_KEY },
    { name: 'crm', key: CRM_KEY },
  ],
});

let double: ErpDouble;
let front: ErpFront;
let proxy: ProxyHarness;
let keyCounter = 0;
/** A fresh Idempotency-Key per test. */
const freshKey = (): string => `key-${Date.now()}-${++keyCounter}`;

function v1Create(name: string, id = 'first'): Record<string, unknown> {
  return {
    id,
    action: 'create',
    model_id: 'res.partner',
    params: [{ name }],
    erp_instance: { url: front.url, db: 'erp_a', user_id: 2, api_key: ERP_A_ADMIN_KEY },
  };
}

function v2Create(name: string, id = 'first'): Record<string, unknown> {
  return {
    id,
    model_id: 'res.partner',
    method: 'create',
    kwargs: { vals_list: [{ name }] },
    erp_instance: { url: front.url, db: 'erp_a', api_key: ERP_A_ADMIN_KEY, user_id: 2 },
  };
}

/** One `Idempotency-Key` header line. */
const keyLine = (value: string): readonly [string, string] => ['Idempotency-Key', value];

/** The ERP calls that reached the double through the front (version lookups aside). */
const erpRuns = (): number => front.executeCalls().length;

function envelopeOf(answer: HttpAnswer): Envelope {
  return answer.json as Envelope;
}

function post(
  target: ProxyHarness,
  path: string,
  body: unknown,
  idempotencyKey: string | undefined,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  return target.post(path, body, {
    'x-api-key': BILLING_KEY,
    ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
    ...headers,
  });
}

/**
 * A POST whose header lines are sent exactly as listed (a name may repeat: two `Idempotency-Key`
 * lines are two lines on the wire, as `curl -H` twice or an intermediary adding its own sends them).
 */
function postWithLines(
  target: ProxyHarness,
  path: string,
  body: unknown,
  lines: readonly (readonly [string, string])[],
): Promise<{ readonly status: number; readonly json: Envelope }> {
  const text = JSON.stringify(body);
  // Raw header lines: Node adds none of its own (not even Host), and sends each pair as one line.
  const raw = [
    'host',
    new URL(target.url).host,
    'content-type',
    'application/json',
    'content-length',
    String(Buffer.byteLength(text)),
    'x-api-key',
    BILLING_KEY,
    ...lines.flat(),
  ];
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${target.url}${path}`, { method: 'POST', headers: raw }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as Envelope });
        } catch {
          reject(new Error(`HTTP ${res.statusCode}, not JSON: ${JSON.stringify(text.slice(0, 200))}`));
        }
      });
    });
    req.on('error', reject);
    req.end(text);
  });
}

beforeAll(async () => {
  double = await startErpDouble({ mode: '19' });
  front = await startErpFront(double.url);
  proxy = await startProxy({ env: { ...state.env(), PROXY_API_KEY: '', PROXY_API_KEYS: KEYS } });
});

afterAll(async () => {
  await proxy?.close();
  await front?.close();
  await double?.close();
});

beforeEach(() => {
  front.plan = () => 'forward';
  front.calls.length = 0;
});

describe('a write with an Idempotency-Key', () => {
  it.each([
    ['v1', '/api/erp/execute', v1Create],
    ['v1 alias', '/v1/erp/execute', v1Create],
    ['v2', '/v2/erp/execute', v2Create],
  ] as const)(
    '%s: runs once, and is replayed with the new id and Idempotent-Replayed: true',
    async (_api, path, create) => {
      const key = freshKey();
      const first = await post(proxy, path, create('Replay Co', 'first'), key);
      expect(first.status).toBe(200);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      expect(envelopeOf(first).error).toBeNull();
      // The same request again: another id, members in another order, gzip accepted this time.
      const { id: _id, ...rest } = create('Replay Co', 'second');
      const reordered = Object.fromEntries(Object.entries({ ...rest, id: 'second' }).reverse());
      const second = await post(proxy, path, reordered, key, { 'accept-encoding': 'gzip' });
      expect(second.status).toBe(200);
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      expect(envelopeOf(second)).toEqual({ ...envelopeOf(first), id: 'second' });
      expect(erpRuns()).toBe(1);
    },
  );

  it('is refused -32011 (422) for the same key with another body or route; nothing runs', async () => {
    const key = freshKey();
    expect((await post(proxy, '/api/erp/execute', v1Create('Conflict Co'), key)).status).toBe(200);
    const otherBody = await post(proxy, '/api/erp/execute', v1Create('Conflict Co 2'), key);
    expect(otherBody.status).toBe(422);
    expect(envelopeOf(otherBody).error?.code).toBe(-32011);
    expect(envelopeOf(otherBody).id).toBe('first');
    const otherRoute = await post(proxy, '/v2/erp/execute', v2Create('Conflict Co'), key);
    expect(otherRoute.status).toBe(422);
    expect(envelopeOf(otherRoute).error?.code).toBe(-32011);
    expect(erpRuns()).toBe(1);
  });

  it('tells a number spelled differently from the first (1.0 is not 1): -32011', async () => {
    const key = freshKey();
    const body = (number: string) =>
      `{"id":"n","action":"create","model_id":"res.partner","params":[{"name":"Number Co"}],"keyword":{"context":{"n":${number}}},"erp_instance":{"url":"${front.url}","db":"erp_a","user_id":2,"api_key":"${ERP_A_ADMIN_KEY}"}}`;
    expect((await post(proxy, '/api/erp/execute', body('1.0'), key)).status).toBe(200);
    const other = await post(proxy, '/api/erp/execute', body('1'), key);
    expect(envelopeOf(other).error?.code).toBe(-32011);
  });

  it('is refused -32010 (409, Retry-After) while the first call runs, and replayed once it is done', async () => {
    const key = freshKey();
    front.plan = (_call, index) => (index === 0 ? { delayMs: 1500 } : 'forward');
    const first = post(proxy, '/api/erp/execute', v1Create('Slow Co'), key);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const during = await post(proxy, '/api/erp/execute', v1Create('Slow Co', 'during'), key);
    expect(during.status).toBe(409);
    expect(envelopeOf(during).error?.code).toBe(-32010);
    expect(Number(during.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const done = await first;
    expect(done.status).toBe(200);
    const after = await post(proxy, '/api/erp/execute', v1Create('Slow Co', 'after'), key);
    expect(after.headers.get('idempotent-replayed')).toBe('true');
    expect(envelopeOf(after).result).toEqual(envelopeOf(done).result);
    expect(erpRuns()).toBe(1);
  });

  it('keeps a -32003 (may have run) and never runs the call again under that key', async () => {
    const key = freshKey();
    front.plan = (_call, index) => (index === 0 ? 'hang' : 'forward');
    const first = await post(proxy, '/api/erp/execute', v1Create('Timeout Co'), key, {
      'x-request-timeout': '1',
    });
    expect(first.status).toBe(504);
    expect(envelopeOf(first).error?.code).toBe(-32003);
    const again = await post(proxy, '/api/erp/execute', v1Create('Timeout Co', 'again'), key);
    expect(again.status).toBe(504);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(envelopeOf(again).id).toBe('again');
    expect(envelopeOf(again).error?.message).toMatch(
      /outcome is unknown.*will not run it again.*new Idempotency-Key/,
    );
    expect(erpRuns()).toBe(1);
  });

  it('runs a call again after -32004 (certainly did not run)', async () => {
    const key = freshKey();
    front.plan = (_call, index) =>
      index === 0 ? { status: 503, headers: { 'retry-after': '1' }, body: 'busy' } : 'forward';
    const first = await post(proxy, '/api/erp/execute', v1Create('Busy Co'), key);
    expect(envelopeOf(first).error?.code).toBe(-32004);
    const again = await post(proxy, '/api/erp/execute', v1Create('Busy Co', 'again'), key);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(envelopeOf(again).error).toBeNull();
    const third = await post(proxy, '/api/erp/execute', v1Create('Busy Co', 'third'), key);
    expect(third.headers.get('idempotent-replayed')).toBe('true');
  });

  it("runs a call again after the ERP's own error (its transaction was rolled back)", async () => {
    const key = freshKey();
    const bad = { ...v1Create('x'), params: [{ no_such_field: 1 }] };
    const first = await post(proxy, '/api/erp/execute', bad, key);
    expect(first.status).toBe(200);
    expect(envelopeOf(first).error).not.toBeNull();
    const again = await post(proxy, '/api/erp/execute', bad, key);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(erpRuns()).toBe(2);
  });

  it('belongs to its caller: two keys of the proxy with one Idempotency-Key run twice', async () => {
    const key = freshKey();
    const billing = await post(proxy, '/api/erp/execute', v1Create('Two Callers Co'), key);
    const crm = await post(proxy, '/api/erp/execute', v1Create('Two Callers Co'), key, {
      'x-api-key': CRM_KEY,
    });
    expect(crm.headers.get('idempotent-replayed')).toBeNull();
    expect(envelopeOf(crm).result).not.toEqual(envelopeOf(billing).result);
    expect(erpRuns()).toBe(2);
  });

  it('runs again once its record is past its TTL, though DynamoDB has not deleted it yet', async () => {
    const key = freshKey();
    expect((await post(proxy, '/api/erp/execute', v1Create('Ttl Co'), key)).status).toBe(200);
    // Time passes: the record's expiry is now behind us; TTL deletes late, so the item is still there.
    await localClient(state.endpoint).send('UpdateItem', {
      TableName: state.table,
      Key: { pk: { S: STORE_KEY_PREFIX.attempt + recordKeyOf('key:billing', key) } },
      UpdateExpression: 'SET expires_at = :past',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':past': { N: String(Math.floor(Date.now() / 1000) - 1) } },
    });
    const again = await post(proxy, '/api/erp/execute', v1Create('Ttl Co', 'again'), key);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(erpRuns()).toBe(2);
  });

  it.each([
    ['empty', ''],
    ['too long', 'k'.repeat(256)],
    ['with a space', 'two words'],
    ['not ASCII', 'clé'],
  ])(
    'refuses a key %s with -32600 naming the header, v1 and v2 alike, before any ERP traffic',
    async (_what, value) => {
      for (const [path, body] of [
        ['/api/erp/execute', v1Create('Header Co')],
        ['/v2/erp/execute', v2Create('Header Co')],
      ] as const) {
        const answer = await proxy.post(path, body, {
          'x-api-key': BILLING_KEY,
          'idempotency-key': value,
        });
        expect(answer.status, path).toBe(400);
        expect(envelopeOf(answer).error?.code, path).toBe(-32600);
        expect(envelopeOf(answer).error?.message, path).toMatch(/Idempotency-Key/);
      }
      expect(front.calls).toHaveLength(0);
    },
  );

  it('accepts a key of 255 visible characters', async () => {
    const key = `${freshKey()}~`.padEnd(255, '!');
    expect((await post(proxy, '/api/erp/execute', v1Create('Long Key Co'), key)).status).toBe(200);
    expect(
      (await post(proxy, '/api/erp/execute', v1Create('Long Key Co'), key)).headers.get(
        'idempotent-replayed',
      ),
    ).toBe('true');
  });
});

describe('Idempotency-Key as one item (draft-ietf-httpapi-idempotency-key-header)', () => {
  it.each([
    ['v1', '/api/erp/execute', v1Create],
    ['v2', '/v2/erp/execute', v2Create],
  ] as const)(
    '%s: replays the quoted form "K" as the key K, either way round',
    async (_api, path, create) => {
      const key = freshKey();
      expect((await post(proxy, path, create('Quoted Co'), key)).status).toBe(200);
      const quoted = await post(proxy, path, create('Quoted Co', 'again'), `"${key}"`);
      expect(quoted.status).toBe(200);
      expect(quoted.headers.get('idempotent-replayed')).toBe('true');
      const other = freshKey();
      expect((await post(proxy, path, create('Quoted Co 2'), `"${other}"`)).status).toBe(200);
      expect((await post(proxy, path, create('Quoted Co 2'), other)).headers.get('idempotent-replayed')).toBe(
        'true',
      );
      expect(erpRuns()).toBe(2);
    },
  );

  it.each([
    ['the header sent twice', [keyLine('K'), keyLine('K')]],
    ['the header sent twice, quoted', [keyLine('"K"'), keyLine('"K"')]],
    ['two keys in one header', [keyLine('K1, K2')]],
    ['a list of strings', [keyLine('"K1", "K2"')]],
    ['an empty string', [keyLine('""')]],
  ] as const)(
    'refuses %s with 400 -32600 naming the header; nothing reaches the ERP',
    async (_what, lines) => {
      for (const [path, body] of [
        ['/api/erp/execute', v1Create('Listed Co')],
        ['/v2/erp/execute', v2Create('Listed Co')],
      ] as const) {
        // A key of this test's own, so no earlier record could answer.
        const unique = freshKey();
        const sent = lines.map(([name, value]) => [name, value.replaceAll('K', unique)] as const);
        const answer = await postWithLines(proxy, path, body, sent);
        expect(answer.status, path).toBe(400);
        expect(answer.json.error?.code, path).toBe(-32600);
        expect(answer.json.error?.message, path).toMatch(/^Invalid Idempotency-Key header: got /);
      }
      expect(front.calls).toHaveLength(0);
    },
  );
});

describe('a read with an Idempotency-Key', () => {
  it('is served as usual each time, never recorded or replayed', async () => {
    const key = freshKey();
    const read = {
      ...v1Create('r'),
      action: 'search_read',
      params: [[]],
      keyword: { fields: ['name'], limit: 1 },
    };
    const first = await post(proxy, '/api/erp/execute', read, key);
    const second = await post(proxy, '/api/erp/execute', read, key);
    expect(first.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(erpRuns()).toBe(2);
  });
});

describe('without an Idempotency-Key', () => {
  it('does no store work', async () => {
    const operations: string[] = [];
    const counting = new Proxy({} as StateStore, {
      get: (_target, name) =>
        name === 'kind'
          ? 'embedded'
          : name === 'maxAnswerBytes'
            ? 1024
            : () => {
                operations.push(String(name));
                return Promise.reject(new Error('no store work expected'));
              },
    });
    const bare = await startProxy({
      env: { PROXY_API_KEY: '', PROXY_API_KEYS: KEYS },
      overrides: { store: counting },
    });
    try {
      const answer = await post(bare, '/api/erp/execute', v1Create('No Key Co'), undefined);
      expect(answer.status).toBe(200);
      expect(envelopeOf(answer).error).toBeNull();
    } finally {
      await bare.close();
    }
    expect(operations).toEqual([]);
  });
});

describe('the store down', () => {
  it('refuses a keyed write -32004 (503) before the ERP; calls without a key are served', async () => {
    const down = await startProxy({
      env: {
        ...state.env(),
        AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:9',
        PROXY_API_KEY: '',
        PROXY_API_KEYS: KEYS,
      },
    });
    try {
      const keyed = await post(down, '/api/erp/execute', v1Create('Down Co'), freshKey());
      expect(keyed.status).toBe(503);
      expect(envelopeOf(keyed).error?.code).toBe(-32004);
      expect(envelopeOf(keyed).error?.message).toMatch(/idempotency store could not be reached/);
      expect(front.calls).toHaveLength(0);
      const unkeyed = await post(down, '/api/erp/execute', v1Create('Down Co'), undefined);
      expect(unkeyed.status).toBe(200);
    } finally {
      await down.close();
    }
  });
});

describe('a record that cannot be completed after the ERP answered', () => {
  let store: ErpFront;
  let fronted: ProxyHarness;

  beforeAll(async () => {
    // The proxy reaches DynamoDB Local through a front that can answer 500 or stop listening.
    store = await startErpFront(state.endpoint);
    fronted = await startProxy({
      env: {
        ...state.env(),
        AWS_ENDPOINT_URL_DYNAMODB: store.url,
        PROXY_API_KEY: '',
        PROXY_API_KEYS: KEYS,
      },
    });
  });
  afterAll(async () => {
    await fronted?.close();
    await store?.close();
  });

  const STORE_ERROR = {
    status: 500,
    headers: { 'content-type': 'application/x-amz-json-1.0' },
    body: '{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"down"}',
  };

  it.each(['answers 500', 'stops listening'] as const)(
    'the store %s while the ERP runs: the caller gets the ERP answer; a retry is -32010 during the lease, then "outcome unknown", never run again',
    async (how) => {
      const key = freshKey();
      store.plan = () => 'forward';
      front.plan = (_call, index) => {
        if (index !== 0) return 'forward';
        // The attempt is recorded (the ERP is called only after): the store goes down now.
        if (how === 'answers 500') store.plan = () => STORE_ERROR;
        else void store.stop();
        return { delayMs: 300 };
      };
      const first = await post(fronted, '/api/erp/execute', v1Create('Unrecorded Co'), key);
      expect(first.status).toBe(200);
      expect(envelopeOf(first).error).toBeNull();
      expect(typeof envelopeOf(first).result).toBe('number');
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      // The store is back; the record is still the attempt's, in progress until its lease passes.
      store.plan = () => 'forward';
      if (how === 'stops listening') await store.start();
      // The store is known down for a while: a keyed write fails at once, before the ERP.
      const paused = await post(fronted, '/api/erp/execute', v1Create('Unrecorded Co', 'paused'), key);
      expect(paused.status).toBe(503);
      expect(envelopeOf(paused).error?.code).toBe(-32004);
      await sleep(STORE_DOWN_PAUSE_MS);
      const during = await post(fronted, '/api/erp/execute', v1Create('Unrecorded Co', 'during'), key);
      expect(during.status).toBe(409);
      expect(envelopeOf(during).error?.code).toBe(-32010);
      // Time passes: the lease (the call's time budget plus a margin) is behind us.
      await localClient(state.endpoint).send('UpdateItem', {
        TableName: state.table,
        Key: { pk: { S: STORE_KEY_PREFIX.attempt + recordKeyOf('key:billing', key) } },
        UpdateExpression: 'SET lease = :past',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':past': { N: String(Date.now() - 1000) } },
      });
      for (const id of ['after', 'later']) {
        const after = await post(fronted, '/api/erp/execute', v1Create('Unrecorded Co', id), key);
        expect(after.status).toBe(504);
        expect(after.headers.get('idempotent-replayed')).toBe('true');
        expect(envelopeOf(after).id).toBe(id);
        expect(envelopeOf(after).error?.code).toBe(-32003);
        expect(envelopeOf(after).error?.message).toMatch(
          /could not be reached.*outcome is unknown.*will not run it again.*new Idempotency-Key/,
        );
      }
      expect(erpRuns()).toBe(1);
    },
  );

  it('an answer too large to keep: the caller gets it; a retry is "outcome unknown", never run again', async () => {
    const key = freshKey();
    // About 600 KB of base64 from random bytes: about 450 KB gzipped, over the store's 398 KB.
    const big = randomBytes(450 * 1024).toString('base64');
    front.plan = (call, index) => {
      if (index !== 0) return 'forward';
      const body = call.path.startsWith('/json/2/')
        ? JSON.stringify(big)
        : JSON.stringify({ jsonrpc: '2.0', id: (JSON.parse(call.body) as { id: unknown }).id, result: big });
      return { status: 200, body };
    };
    const first = await post(proxy, '/v2/erp/execute', v2Create('Large Co'), key);
    expect(first.status).toBe(200);
    expect(envelopeOf(first).result).toBe(big);
    const again = await post(proxy, '/v2/erp/execute', v2Create('Large Co', 'again'), key);
    expect(again.status).toBe(504);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(envelopeOf(again).error?.code).toBe(-32003);
    expect(envelopeOf(again).error?.message).toMatch(/too large to keep.*outcome is unknown/);
    expect(erpRuns()).toBe(1);
  });
});

describe('a key whose policy was narrowed after the first call', () => {
  it('is refused -32008 by its current policy, not served the replay', async () => {
    const key = freshKey();
    expect((await post(proxy, '/api/erp/execute', v1Create('Policy Co'), key)).status).toBe(200);
    // The same key name, now read-only (a rotation of the secret), on an instance sharing the table.
    const narrowed = await startProxy({
      env: {
        ...state.env(),
        PROXY_API_KEY: '',
        PROXY_API_KEYS: JSON.stringify({
          keys: [{ name: 'billing', key: BILLING_KEY, policy: { access: 'read' } }],
        }),
      },
    });
    try {
      const again = await post(narrowed, '/api/erp/execute', v1Create('Policy Co', 'again'), key);
      expect(again.status).toBe(403);
      expect(envelopeOf(again).error?.code).toBe(-32008);
      expect(again.headers.get('idempotent-replayed')).toBeNull();
    } finally {
      await narrowed.close();
    }
  });
});

describe('observability', () => {
  it('counts replays and conflicts in /_/metrics, and /_/about says where the state is', async () => {
    const key = freshKey();
    await post(proxy, '/v2/erp/execute', v2Create('Metrics Co'), key);
    await post(proxy, '/v2/erp/execute', v2Create('Metrics Co'), key);
    await post(proxy, '/v2/erp/execute', v2Create('Metrics Co 2'), key);
    const metrics = await proxy.get('/_/metrics', { 'x-api-key': BILLING_KEY });
    expect(metrics.text).toMatch(/erp_proxy_idempotent_replays\{[^}]*api="v2"[^}]*\} [1-9]/);
    expect(metrics.text).toMatch(/erp_proxy_idempotency_conflicts\{[^}]*api="v2"[^}]*\} [1-9]/);
    const about = (await proxy.get('/_/about')).json as { state_store: string };
    expect(about.state_store).toBe('dynamodb');
  });

  it('keeps the answer compressed in the store, and the stored bytes hold no key', async () => {
    const key = freshKey();
    await post(proxy, '/api/erp/execute', v1Create('Stored Co'), key);
    const got = await localClient(state.endpoint).send('GetItem', {
      TableName: state.table,
      Key: { pk: { S: STORE_KEY_PREFIX.attempt + recordKeyOf('key:billing', key) } },
    });
    const item = got.Item as Record<string, { B?: string; S?: string }>;
    const stored = gunzipSync(Buffer.from(item.ans?.B ?? '', 'base64')).toString('utf8');
    expect(stored).toContain('"result"');
    const everything = JSON.stringify(item) + stored;
    for (const secret of [BILLING_KEY, ERP_A_ADMIN_KEY, key]) expect(everything).not.toContain(secret);
  });
});

describe('POST /mcp write tools with idempotency_key', () => {
  const MODERN = '2026-07-28';
  const META = {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  let mcpProxy: ProxyHarness;

  beforeAll(async () => {
    mcpProxy = await startProxy({
      env: { ...state.env(), PROXY_API_KEY: '', PROXY_API_KEYS: KEYS, MCP_WRITE_TOOLS: 'true' },
    });
  });
  afterAll(async () => {
    await mcpProxy?.close();
  });

  const erp = () => ({
    'x-erp-url': front.url,
    'x-erp-db': 'erp_a',
    'x-erp-api-key': ERP_A_ADMIN_KEY,
    'x-erp-user-id': '2',
  });

  /** One tools/call in the legacy era (2025-11-25, no initialize: stateless) or the 2026-07-28 one. */
  async function callTool(
    era: 'legacy' | 'modern',
    id: number,
    name: string,
    args: Record<string, unknown>,
    apiKey = BILLING_KEY,
    target: ProxyHarness = mcpProxy,
  ): Promise<{ status: number; id: unknown; result: { isError?: boolean; content: { text: string }[] } }> {
    const params = { name, arguments: args, ...(era === 'modern' ? { _meta: META } : {}) };
    const headers: Record<string, string> = {
      'x-api-key': apiKey,
      accept: 'application/json, text/event-stream',
      ...erp(),
      ...(era === 'modern'
        ? { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': name }
        : { 'mcp-protocol-version': '2025-11-25' }),
    };
    const answer = await target.post('/mcp', { jsonrpc: '2.0', id, method: 'tools/call', params }, headers);
    const json = answer.json as { id: unknown; result: { isError?: boolean; content: { text: string }[] } };
    return { status: answer.status, id: json.id, result: json.result };
  }

  it.each(['legacy', 'modern'] as const)(
    '%s era: create runs once; the retry is the first result, re-wrapped for its own request',
    async (era) => {
      const key = freshKey();
      const args = { model: 'res.partner', values: { name: `Mcp ${era} Co` }, idempotency_key: key };
      const first = await callTool(era, 1, 'create', args);
      expect(first.result.isError ?? false, first.result.content[0]?.text).toBe(false);
      const again = await callTool(era, 2, 'create', args);
      expect(again.id).toBe(2);
      expect(again.result.isError ?? false).toBe(false);
      expect(again.result.content).toEqual(first.result.content);
      expect(erpRuns()).toBe(1);
    },
  );

  it('answers -32011 (another change with the key) as a tool error with advice, nothing run', async () => {
    const key = freshKey();
    await callTool('legacy', 1, 'create', {
      model: 'res.partner',
      values: { name: 'Mcp A' },
      idempotency_key: key,
    });
    const other = await callTool('legacy', 2, 'create', {
      model: 'res.partner',
      values: { name: 'Mcp B' },
      idempotency_key: key,
    });
    expect(other.status).toBe(200);
    expect(other.result.isError).toBe(true);
    const error = JSON.parse(other.result.content[0]?.text ?? '{}').error;
    expect(error).toMatchObject({ source: 'proxy', code: -32011, retry_safe: true, retry_can_help: false });
    expect(erpRuns()).toBe(1);
  });

  it('answers -32010 (still running) as a tool error that says to retry with the same key', async () => {
    const key = freshKey();
    front.plan = (_call, index) => (index === 0 ? { delayMs: 1500 } : 'forward');
    const args = { model: 'res.partner', values: { name: 'Mcp Slow' }, idempotency_key: key };
    const first = callTool('modern', 1, 'create', args);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const during = await callTool('modern', 2, 'create', args);
    expect(during.result.isError).toBe(true);
    const error = JSON.parse(during.result.content[0]?.text ?? '{}').error;
    expect(error).toMatchObject({ code: -32010, retry_safe: true, retry_can_help: true });
    expect(error.retry).toMatch(/SAME idempotency_key/);
    await first;
    expect(erpRuns()).toBe(1);
  });

  it('keeps a key per caller: the two proxy keys with one key run twice', async () => {
    const key = freshKey();
    const args = { model: 'res.partner', values: { name: 'Mcp Two Callers' }, idempotency_key: key };
    await callTool('legacy', 1, 'create', args, BILLING_KEY);
    await callTool('legacy', 2, 'create', args, CRM_KEY);
    expect(erpRuns()).toBe(2);
  });

  it.each([
    ['targets', { policy: { targets: ['erp.example.com'] } }, -32008],
    ['databases', { policy: { databases: ['erp_b'] } }, -32008],
    ["the proxy's ERP_ALLOWED_DATABASES", { env: { ERP_ALLOWED_DATABASES: 'erp_b' } }, -32008],
  ] as const)(
    'refuses a replay once %s no longer allow the connection: a tool error, not the kept result',
    async (_rule, narrowing, code) => {
      const key = freshKey();
      const args = { model: 'res.partner', values: { name: 'Mcp Narrowed Co' }, idempotency_key: key };
      const first = await callTool('legacy', 1, 'create', args);
      expect(first.result.isError ?? false, first.result.content[0]?.text).toBe(false);
      // The same key name on an instance sharing the table, its policy narrowed (the x-erp-url is
      // 127.0.0.1, outside `erp.example.com`; the database erp_a is outside erp_b).
      const policy = 'policy' in narrowing ? { policy: narrowing.policy } : {};
      const narrowed = await startProxy({
        env: {
          ...state.env(),
          PROXY_API_KEY: '',
          PROXY_API_KEYS: JSON.stringify({ keys: [{ name: 'billing', key: BILLING_KEY, ...policy }] }),
          MCP_WRITE_TOOLS: 'true',
          ...('env' in narrowing ? narrowing.env : {}),
        },
      });
      try {
        const again = await callTool('legacy', 2, 'create', args, BILLING_KEY, narrowed);
        expect(again.status).toBe(200);
        expect(again.result.isError).toBe(true);
        const error = JSON.parse(again.result.content[0]?.text ?? '{}').error;
        expect(error).toMatchObject({ source: 'proxy', code });
        expect(again.result.content).not.toEqual(first.result.content);
      } finally {
        await narrowed.close();
      }
      expect(erpRuns()).toBe(1);
    },
  );

  it('offers idempotency_key on the write tools only, and refuses a bad one before any ERP call', async () => {
    const listed = await mcpProxy.post(
      '/mcp',
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
      {
        'x-api-key': BILLING_KEY,
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
    );
    const tools = (
      listed.json as { result: { tools: { name: string; inputSchema: { properties: object } }[] } }
    ).result.tools;
    for (const tool of tools) {
      const writes = ['create', 'write', 'unlink', 'call_method'].includes(tool.name);
      expect('idempotency_key' in tool.inputSchema.properties, tool.name).toBe(writes);
    }
    const bad = await callTool('legacy', 3, 'create', {
      model: 'res.partner',
      values: { name: 'x' },
      idempotency_key: 'two words',
    });
    expect(bad.result.isError).toBe(true);
    expect(front.calls).toHaveLength(0);
  });
});

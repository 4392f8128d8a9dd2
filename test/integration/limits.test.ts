/**
 * The limits (README, "Limits") over real HTTP, as on Lambda: several local proxy processes (each
 * its own Node process, as Lambda instances) sharing one DynamoDB Local table, against the ERP
 * double, which records its arrivals and the most calls it had in flight. And, in one process:
 * an ERP's limit binding every caller, the store down (served and counted), the typed client
 * retrying a 429 after `Retry-After`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErpProxy } from '../../client/src/index.ts';
import type { ErpDouble } from '../erp-double/types.ts';
import { type Envelope, USERS, useErpDouble, withProxy } from '../support/fixtures.ts';
import { erpHeaders, isError, type ToolError, toolError, withMcpClient } from '../support/mcp-client.ts';
import { freePort } from '../support/proxy-harness.ts';
import { type ProxyProcess, startProxyProcesses } from '../support/proxy-processes.ts';
import { useStateTable } from '../support/state-table.ts';
import { startTokenIssuer } from '../support/token-issuer.ts';

const admin = USERS.adminA;

const KEYS = {
  burst: 'burst-key-0123456789abcdef',
  steady: 'steady-key-0123456789abcdef',
  other: 'other-key-0123456789abcdef',
} as const;

const PROXY_API_KEYS = JSON.stringify({
  keys: [
    { name: 'burst', key: KEYS.burst, policy: { limits: [{ requests: 10, per: 'second' }] } },
    { name: 'steady', key: KEYS.steady },
    { name: 'other', key: KEYS.other },
  ],
});

/** A v1 read of the double through `proxy`, with `key`. */
function v1Read(proxy: Pick<ProxyProcess, 'post'>, double: ErpDouble, key: string, id = 'limits') {
  return proxy.post(
    '/api/erp/execute',
    {
      id,
      action: 'search_count',
      model_id: 'res.partner',
      params: [[]],
      keyword: {},
      erp_instance: { url: double.url, db: 'erp_a', api_key: admin.apiKey, user_id: admin.uid },
    },
    { 'x-api-key': key },
  );
}

/** A v1 read through `proxy`, of the double named by `url` (another spelling of its address). */
function v1ReadAt(proxy: Pick<ProxyProcess, 'post'>, url: string, key: string, id = 'limits') {
  return proxy.post(
    '/api/erp/execute',
    {
      id,
      action: 'search_count',
      model_id: 'res.partner',
      params: [[]],
      keyword: {},
      erp_instance: { url, db: 'erp_a', api_key: admin.apiKey, user_id: admin.uid },
    },
    { 'x-api-key': key },
  );
}

/** The execute calls that reached the double. */
function executes(double: ErpDouble) {
  return double.requests.filter((request) => request.body.includes('"execute_kw"'));
}

/** Runs `count` calls, at most `width` at a time; the answers in call order. */
async function inParallel<T>(count: number, width: number, call: (i: number) => Promise<T>): Promise<T[]> {
  const answers: T[] = new Array(count);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      answers[i] = await call(i);
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  return answers;
}

/** How many windows of `ms` the span [from, to] touches. */
function windowsSpanned(from: number, to: number, ms: number): number {
  return Math.floor(to / ms) - Math.floor(from / ms) + 1;
}

/**
 * `count` proxy processes on the block's own DynamoDB Local table, with these keys and `env`,
 * started before the block's tests and stopped after them.
 */
function useProxyProcesses(count: number, prefix: string, env: Record<string, string> = {}): ProxyProcess[] {
  const state = useStateTable(prefix);
  const procs: ProxyProcess[] = [];
  beforeAll(async () => {
    procs.push(
      ...(await startProxyProcesses(count, { ...state.env(), PROXY_API_KEY: '', PROXY_API_KEYS, ...env })),
    );
  }, 90_000);
  afterAll(async () => {
    await Promise.all(procs.map((proc) => proc.stop()));
  });
  return procs;
}

describe('a key limit of 10 per second across three processes', () => {
  const double = useErpDouble({ mode: '19' });
  const procs = useProxyProcesses(3, 'limits-key');

  it('lets at most 10 calls per window reach the ERP out of a burst of 200; the rest are 429 and never reach it; another key is untouched', async () => {
    double.reset();
    const started = Date.now();
    // 200 calls as fast as 24 callers at once can send them (8 per process): a burst the ERP would
    // take whole, and one the store answers in time on a shared machine (a slower store fails open).
    const [burst, steady] = await Promise.all([
      inParallel(200, 24, (i) => v1Read(procs[i % 3] as ProxyProcess, double, KEYS.burst, `b${i}`)),
      inParallel(20, 3, (i) => v1Read(procs[i % 3] as ProxyProcess, double, KEYS.steady, `s${i}`)),
    ]);
    const ended = Date.now();

    const served = burst.filter((answer) => answer.status === 200);
    const refused = burst.filter((answer) => answer.status !== 200);
    expect(served.length).toBeGreaterThanOrEqual(10);
    expect(served.length).toBeLessThanOrEqual(10 * windowsSpanned(started, ended, 1000));
    expect(refused.length).toBeGreaterThan(0);
    for (const answer of refused) {
      expect(answer.status).toBe(429);
      const envelope = answer.json as Envelope;
      expect(envelope.error?.code).toBe(-32004);
      expect(envelope.error?.message).toBe(
        "Rate limited: this key's limit of 10 calls per second is used up; retry after 1 s. The call did not run.",
      );
      expect(answer.headers.get('retry-after')).toBe('1');
      expect(answer.headers.get('ratelimit-policy')).toBe('"key-second";q=10;w=1');
      expect(answer.headers.get('ratelimit')).toBe('"key-second";r=0;t=1');
      expect(answer.text).not.toContain(KEYS.burst);
    }
    for (const answer of served) {
      expect(answer.headers.get('ratelimit-policy')).toBe('"key-second";q=10;w=1');
      expect(answer.headers.get('ratelimit')).toMatch(/^"key-second";r=\d;t=1$/);
    }
    // Only the served calls reached the ERP (the refused never did).
    expect(executes(double)).toHaveLength(served.length + 20);
    // Every call was counted in the shared table: none was served because the store failed to answer.
    expect(procs.some((proc) => proc.output().includes('"limits_failed_open"'))).toBe(false);
    // Another key has a budget of its own (none here): all 20 served meanwhile.
    expect(steady.map((answer) => answer.status)).toEqual(Array(20).fill(200));
  });

  it('names the rule in the request log line of a refusal, and counts it in /_/metrics by key and rule', async () => {
    const lines = procs
      .flatMap((proc) => proc.output().split('\n'))
      .filter((line) => line.includes('"limit_rule"'));
    expect(lines.length).toBeGreaterThan(0);
    const line = JSON.parse(lines[0] as string) as Record<string, unknown>;
    expect(line).toMatchObject({
      caller: 'burst',
      limit_rule: 'key_second',
      error_code: -32004,
      http_status: 429,
    });
    const metrics = await Promise.all(
      procs.map((proc) => proc.get('/_/metrics', { 'x-api-key': KEYS.steady })),
    );
    const throttled = metrics
      .flatMap((answer) => answer.text.split('\n'))
      .filter((row) => row.startsWith('erp_proxy_throttled{key="burst",rule="key_second",host="-"}'))
      .map((row) => Number(row.split(' ').at(-1)));
    expect(throttled.reduce((total, n) => total + n, 0)).toBeGreaterThan(0);
  });

  it('says in /_/about that limits are configured, never what they are', async () => {
    const about = (await procs[0]?.get('/_/about'))?.json as Record<string, unknown>;
    expect(about.limits).toBe(true);
    expect(JSON.stringify(about)).not.toContain('"requests"');
  });
});

describe('an in-flight cap of 4 at a slow ERP, across three processes', () => {
  const double = useErpDouble({ mode: '19' });
  const procs = useProxyProcesses(3, 'limits-flight', {
    ERP_TARGET_LIMITS: JSON.stringify({ '127.0.0.1': { in_flight: 4 } }),
  });

  it('never lets the ERP see more than 4 calls at once; the others are 429 with Retry-After 1, from every key', async () => {
    double.reset();
    double.setDelay(400);
    const keys = [KEYS.burst, KEYS.steady, KEYS.other];
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        v1Read(procs[i % 3] as ProxyProcess, double, keys[i % 3] as string, `f${i}`),
      ),
    );
    double.setDelay(0);
    expect(double.maxInFlight).toBeLessThanOrEqual(4);
    const served = answers.filter((answer) => answer.status === 200);
    expect(served.length).toBeGreaterThanOrEqual(1);
    expect(executes(double)).toHaveLength(served.length);
    for (const answer of answers.filter((a) => a.status !== 200)) {
      expect(answer.status).toBe(429);
      expect(answer.headers.get('retry-after')).toBe('1');
      expect((answer.json as Envelope).error?.message).toBe(
        'The ERP 127.0.0.1 is busy: it has 4 calls in flight through the proxy, its cap (in_flight); retry after 1 s. The call did not run.',
      );
    }
    // Slots are given back: once the calls are over, four at once are served again.
    const again = await Promise.all(
      Array.from({ length: 4 }, (_, i) => v1Read(procs[i % 3] as ProxyProcess, double, KEYS.steady)),
    );
    expect(again.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
  });
});

describe('one ERP, one budget: the IPv6 spellings of a limited address, across three processes', () => {
  const double = useErpDouble({ mode: '19' });
  // The entry itself is written in an IPv6 form: it is read as 127.0.0.1 (docs/design.md, "Limits: protecting the ERP").
  const procs = useProxyProcesses(3, 'limits-spelling', {
    ERP_TARGET_LIMITS: JSON.stringify({ '[::ffff:7f00:1]': { in_flight: 1, requests: 3, per: 'day' } }),
  });
  /** The double's address as every form the target policy reads as 127.0.0.1 (docs/target-policy.md). */
  const spellings = (): string[] => {
    const port = new URL(double.url).port;
    return [
      '[::ffff:127.0.0.1]', // IPv4-mapped
      '[::ffff:7f00:1]',
      '[64:ff9b::7f00:1]', // NAT64
      '[::127.0.0.1]', // IPv4-compatible
      '[::ffff:0:7f00:1]', // SIIT
      '[2002:7f00:1::1]', // 6to4
    ].map((host) => `http://${host}:${port}`);
  };

  it('refuses every spelling while 127.0.0.1 is busy or its rate used up; none reaches the ERP', {
    timeout: 60_000,
  }, async () => {
    double.reset();
    const started = Date.now();
    // Busy: a slow call through 127.0.0.1 holds the one slot; every other spelling is refused.
    // Long enough for the refusals below to be answered on a loaded machine while it runs.
    double.setDelay(10_000);
    const slow = v1Read(procs[0] as ProxyProcess, double, KEYS.steady, 'slow');
    while (executes(double).length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    // One at a time: refused calls running at once would also count against the rate together
    // (each gives its count back when refused), and could be refused by the rate instead.
    const busy = [];
    for (const [i, url] of spellings().entries())
      busy.push(await v1ReadAt(procs[1 + (i % 2)] as ProxyProcess, url, KEYS.other, `busy${i}`));
    double.setDelay(0);
    expect((await slow).status).toBe(200);
    for (const answer of busy) {
      expect(answer.status, answer.text).toBe(429);
      expect((answer.json as Envelope).error?.message).toBe(
        'The ERP 127.0.0.1 is busy: it has 1 call in flight through the proxy, its cap (in_flight); retry after 1 s. The call did not run.',
      );
    }
    expect(executes(double)).toHaveLength(1);
    // The slot free again: the mapped spelling reaches the ERP (the same address), and counts.
    const mapped = await v1ReadAt(procs[1] as ProxyProcess, spellings()[0] as string, KEYS.other, 'mapped');
    expect(mapped.status).toBe(200);
    expect(mapped.headers.get('ratelimit')).toMatch(/^"erp-day";r=1;t=\d+$/);
    expect((await v1Read(procs[2] as ProxyProcess, double, KEYS.burst, 'third')).status).toBe(200);
    // The day's 3 calls are used up: every spelling, from every process and key, is refused.
    const used = await Promise.all(
      spellings().map((url, i) =>
        v1ReadAt(procs[i % 3] as ProxyProcess, url, [KEYS.steady, KEYS.other][i % 2] as string, `used${i}`),
      ),
    );
    const spanned = windowsSpanned(started, Date.now(), 86_400_000);
    const served = used.filter((answer) => answer.status === 200);
    // A day's window ending during the test would give 3 more calls; otherwise none passes.
    expect(served.length).toBeLessThanOrEqual(3 * (spanned - 1));
    for (const answer of used.filter((a) => a.status !== 200)) {
      expect(answer.status).toBe(429);
      expect((answer.json as Envelope).error?.code).toBe(-32004);
      expect((answer.json as Envelope).error?.message).toMatch(
        /^Rate limited: the ERP 127\.0\.0\.1's limit of 3 calls per day is used up; retry after \d+ s\. The call did not run\.$/,
      );
    }
    expect(executes(double)).toHaveLength(3 + served.length);
    // The log lines and the metric name the one ERP, 127.0.0.1, whatever spelling was refused.
    const refusals = procs
      .flatMap((proc) => proc.output().split('\n'))
      .filter((line) => line.includes('"limit_host"'))
      .map((line) => (JSON.parse(line) as { limit_host?: string }).limit_host);
    expect(new Set(refusals)).toEqual(new Set(['127.0.0.1']));
  });
});

describe('a process killed while it holds the only in-flight slot', () => {
  const double = useErpDouble({ mode: '19' });
  const procs = useProxyProcesses(2, 'limits-kill', {
    ERP_TARGET_LIMITS: JSON.stringify({ '127.0.0.1': { in_flight: 1 } }),
  });

  it('frees the slot within the function timeout (the lease), not before', { timeout: 60_000 }, async () => {
    const [doomed, survivor] = procs as [ProxyProcess, ProxyProcess];
    double.reset();
    double.setDelay(50_000);
    const calledAt = Date.now();
    const pending = v1Read(doomed, double, KEYS.steady).catch(() => undefined);
    while (executes(double).length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    await doomed.kill();
    await pending;
    double.setDelay(0);
    // The dead process never released its slot: the cap still holds...
    expect((await v1Read(survivor, double, KEYS.steady)).status).toBe(429);
    // ...until its lease (the emulated function's 28 s) passes.
    const leaseEnds = calledAt + 28_000;
    let status = 429;
    while (status === 429 && Date.now() < leaseEnds + 5_000) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      status = (await v1Read(survivor, double, KEYS.steady)).status;
    }
    expect(status).toBe(200);
  });
});

describe('in one process', () => {
  const double = useErpDouble({ mode: '19' });

  it("binds every caller to an ERP's rate: two keys share its budget", async () => {
    await withProxy(
      {
        env: {
          PROXY_API_KEY: '',
          PROXY_API_KEYS,
          ERP_TARGET_LIMITS: JSON.stringify({ '127.0.0.1': { requests: 3, per: 'hour' } }),
        },
      },
      async (proxy) => {
        double.reset();
        const started = Date.now();
        const answers = [];
        for (const key of [KEYS.steady, KEYS.other, KEYS.steady, KEYS.other, KEYS.steady, KEYS.other])
          answers.push(await v1Read(proxy, double, key));
        const spanned = windowsSpanned(started, Date.now(), 3_600_000);
        const served = answers.filter((answer) => answer.status === 200).length;
        expect(served).toBeLessThanOrEqual(3 * spanned);
        expect(served).toBeGreaterThanOrEqual(3);
        const refused = answers.find((answer) => answer.status === 429);
        expect((refused?.json as Envelope | undefined)?.error?.message).toMatch(
          /^Rate limited: the ERP 127\.0\.0\.1's limit of 3 calls per hour is used up; retry after \d+ s\. The call did not run\.$/,
        );
        expect(refused?.headers.get('ratelimit-policy')).toBe('"erp-hour";q=3;w=3600');
        expect(executes(double)).toHaveLength(served);
        // The version endpoints are not limited.
        const version = await proxy.post(
          '/api/erp/version',
          { id: 'v', url: double.url },
          { 'x-api-key': KEYS.steady },
        );
        expect(version.status).toBe(200);
      },
    );
  });

  it('puts the RateLimit headers on every answer of a counted call, a failed one too', async () => {
    const closed = await freePort();
    await withProxy({ env: { PROXY_API_KEY: '', PROXY_API_KEYS } }, async (proxy) => {
      // The ERP cannot be reached (-32004 from the upstream, after the call was counted).
      const failed = await v1Read(proxy, { url: `http://127.0.0.1:${closed}` } as ErpDouble, KEYS.burst);
      expect(failed.status).not.toBe(200);
      expect(failed.status).not.toBe(429);
      expect(failed.headers.get('ratelimit-policy')).toBe('"key-second";q=10;w=1');
      expect(failed.headers.get('ratelimit')).toMatch(/^"key-second";r=\d+;t=1$/);
      // An unlimited key's failed call carries none.
      const unlimited = await v1Read(proxy, { url: `http://127.0.0.1:${closed}` } as ErpDouble, KEYS.steady);
      expect(unlimited.status).toBe(failed.status);
      expect(unlimited.headers.get('ratelimit')).toBeNull();
    });
  });

  it('serves every call when the store cannot be reached, with a log line and the metric', async () => {
    const closed = await freePort();
    await withProxy(
      {
        env: {
          PROXY_API_KEY: '',
          PROXY_API_KEYS,
          ERP_TARGET_LIMITS: JSON.stringify({ '127.0.0.1': { in_flight: 1, requests: 1, per: 'day' } }),
          STATE_TABLE: 'nowhere',
          AWS_ENDPOINT_URL_DYNAMODB: `http://127.0.0.1:${closed}`,
          AWS_ACCESS_KEY_ID: 'local',
          AWS_SECRET_ACCESS_KEY: 'local',
          AWS_REGION: 'eu-west-1',
        },
      },
      async (proxy) => {
        double.reset();
        const answers = await Promise.all(Array.from({ length: 3 }, () => v1Read(proxy, double, KEYS.burst)));
        expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
        expect(executes(double)).toHaveLength(3);
        const metrics = await proxy.get('/_/metrics', { 'x-api-key': KEYS.steady });
        expect(metrics.text).toContain('erp_proxy_limits_failed_open{api="v1"} 3\n');
      },
    );
  });

  it('checks the limits after the Idempotency-Key lookup: a 429 is never recorded, and the same key runs later', async () => {
    await withProxy(
      {
        env: {
          PROXY_API_KEY: '',
          PROXY_API_KEYS: JSON.stringify({
            keys: [{ name: 'writer', key: KEYS.burst, policy: { limits: [{ requests: 1, per: 'second' }] } }],
          }),
        },
      },
      async (proxy) => {
        double.reset();
        const create = (idempotencyKey?: string) =>
          proxy.post(
            '/v2/erp/execute',
            {
              id: 'w',
              model_id: 'res.partner',
              method: 'create',
              kwargs: { vals_list: [{ name: 'Limits idempotency partner' }] },
              erp_instance: { url: double.url, db: 'erp_a', api_key: admin.apiKey },
            },
            { 'x-api-key': KEYS.burst, ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
          );
        const creates = () =>
          double.requests.filter((request) => request.path.endsWith('/res.partner/create'));
        // Wait for a fresh second, so that the first two calls share one window.
        await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 20));
        expect((await create()).status).toBe(200);
        const refused = await create('limits-key-1');
        expect(refused.status).toBe(429);
        expect(creates()).toHaveLength(1);
        await new Promise((resolve) =>
          setTimeout(resolve, Number(refused.headers.get('retry-after')) * 1000),
        );
        const later = await create('limits-key-1');
        expect(later.status).toBe(200);
        expect(later.headers.get('idempotent-replayed')).toBeNull();
        expect(later.headers.get('ratelimit')).toBe('"key-second";r=0;t=1');
        expect(creates()).toHaveLength(2);
        // The kept answer is replayed without counting: the budget of this second is spent already.
        const replay = await create('limits-key-1');
        expect(replay.status).toBe(200);
        expect(replay.headers.get('idempotent-replayed')).toBe('true');
        // Not counted, so no RateLimit of its own, and not the first call's either (never kept).
        expect(replay.headers.get('ratelimit')).toBeNull();
        expect(creates()).toHaveLength(2);
      },
    );
  });

  it('the typed client retries a 429 after Retry-After, and the call runs once', async () => {
    await withProxy(
      {
        env: {
          PROXY_API_KEY: '',
          PROXY_API_KEYS: JSON.stringify({
            keys: [{ name: 'slow', key: KEYS.burst, policy: { limits: [{ requests: 1, per: 'second' }] } }],
          }),
        },
      },
      async (proxy) => {
        const statuses: number[] = [];
        const recording: typeof fetch = async (input, init) => {
          const response = await fetch(input, init);
          if (String(input).endsWith('/v2/erp/execute')) statuses.push(response.status);
          return response;
        };
        const erp = new ErpProxy({ url: proxy.url, apiKey: KEYS.burst, fetch: recording }).erp({
          url: double.url,
          db: admin.db,
          apiKey: admin.apiKey,
        });
        double.reset();
        await erp.searchCount('res.partner', []);
        await erp.searchCount('res.partner', []);
        expect(statuses).toContain(429);
        expect(statuses.filter((status) => status === 200)).toHaveLength(2);
        expect(double.requests.filter((request) => request.path.startsWith('/json/2/'))).toHaveLength(2);
      },
    );
  });
});

describe('POST /mcp: a limited tool call is a tool error an agent can back off from', () => {
  const double = useErpDouble({ mode: '18' });
  const AGENT = 'agent-key-0123456789abcdef';
  const keys = JSON.stringify({
    keys: [
      { name: 'agent', key: AGENT, policy: { apis: ['mcp'], limits: [{ requests: 2, per: 'day' }] } },
      { name: 'free', key: KEYS.steady },
    ],
  });
  const headers = (key: string) => ({
    'x-api-key': key,
    ...erpHeaders({ url: double.url, db: admin.db, apiKey: admin.apiKey, uid: admin.uid }),
  });

  it("counts tool calls once each (tools/list is free) against the key's budget, and says when to retry", async () => {
    await withProxy({ env: { PROXY_API_KEY: '', PROXY_API_KEYS: keys } }, async (proxy) => {
      await withMcpClient(proxy.url, headers(AGENT), async (client) => {
        double.reset();
        const started = Date.now();
        for (let i = 0; i < 3; i += 1) await client.listTools();
        const results = [];
        for (let i = 0; i < 3; i += 1)
          results.push(await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } }));
        const served = results.filter((result) => !isError(result)).length;
        expect(served).toBeLessThanOrEqual(2 * windowsSpanned(started, Date.now(), 86_400_000));
        const refused = results.find(isError);
        const error = toolError(refused) as ToolError & { retry_after_seconds?: number };
        expect(error).toMatchObject({
          source: 'proxy',
          code: -32004,
          retry_safe: true,
          retry_can_help: true,
        });
        expect(error.message).toMatch(
          /^Rate limited: this key's limit of 2 calls per day is used up; retry after \d+ s\./,
        );
        expect(error.retry_after_seconds).toBeGreaterThanOrEqual(1);
        expect(error.retry).toContain('do not retry at once or in a loop');
        // The refused call never reached the ERP: two tool calls' requests, none of the third.
        expect(double.requests.filter((request) => request.body.includes('"execute_kw"'))).toHaveLength(
          served,
        );
      });
    });
  });

  it("holds one in-flight slot across a tool's sequential ERP requests; a second tool call meanwhile is refused", async () => {
    await withProxy(
      {
        env: {
          PROXY_API_KEY: '',
          PROXY_API_KEYS: keys,
          ERP_TARGET_LIMITS: JSON.stringify({ '127.0.0.1': { in_flight: 1 } }),
        },
      },
      async (proxy) => {
        await withMcpClient(proxy.url, headers(KEYS.steady), async (client) => {
          double.reset();
          double.setDelay(300);
          // ERP 18: the tool asks the version first, then calls execute_kw: two requests, one slot.
          const [first, second] = await Promise.all([
            client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } }),
            new Promise((resolve) => setTimeout(resolve, 100)).then(() =>
              client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } }),
            ),
          ]);
          double.setDelay(0);
          expect(isError(first)).toBe(false);
          expect(double.requests.length).toBeGreaterThanOrEqual(2);
          expect(double.maxInFlight).toBe(1);
          const error = toolError(second) as ToolError & { retry_after_seconds?: number };
          expect(error.message).toBe(
            'The ERP 127.0.0.1 is busy: it has 1 call in flight through the proxy, its cap (in_flight); retry after 1 s. The call did not run.',
          );
          expect(error.retry_after_seconds).toBe(1);
          // Released after the tool's last request: the next call is served.
          expect(
            isError(await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } })),
          ).toBe(false);
        });
      },
    );
  });

  it('gives two people of one OAuth group separate budgets', async () => {
    const port = await freePort();
    const resource = `http://127.0.0.1:${port}/mcp`;
    const issuer = await startTokenIssuer(resource);
    try {
      await withProxy(
        {
          env: {
            PORT: String(port),
            MCP_OAUTH_ISSUER: issuer.issuer,
            MCP_OAUTH_AUDIENCE: resource,
            MCP_OAUTH_IDENTITIES: JSON.stringify({
              identities: [
                {
                  name: 'sales',
                  match: { claim: 'groups', value: 'sales' },
                  erp: { url: double.url, db: admin.db, user_id: admin.uid, api_key: admin.apiKey },
                  policy: { limits: [{ requests: 1, per: 'day' }] },
                },
              ],
            }),
          },
        },
        async () => {
          const callAs = async (sub: string) => {
            const token = await issuer.mint({ sub, groups: ['sales'], scope: 'erp.read' });
            // No proxy key: the token alone says who calls.
            const response = await fetch(resource, {
              method: 'POST',
              headers: {
                'content-type': 'application/json',
                accept: 'application/json, text/event-stream',
                authorization: `Bearer ${token}`,
              },
              body: JSON.stringify({
                jsonrpc: '2.0',
                id: 1,
                method: 'tools/call',
                params: { name: 'search_count', arguments: { model: 'res.partner' } },
              }),
            });
            const answer = { json: (await response.json()) as unknown };
            return (answer.json as { result: unknown }).result;
          };
          const started = Date.now();
          const alice = [await callAs('alice'), await callAs('alice')];
          const bob = await callAs('bob');
          expect(isError(bob)).toBe(false);
          if (windowsSpanned(started, Date.now(), 86_400_000) === 1) {
            expect(isError(alice[0])).toBe(false);
            expect(toolError(alice[1]).message).toMatch(
              /^Rate limited: your limit of 1 call per day is used up/,
            );
          }
        },
      );
    } finally {
      await issuer.close();
    }
  });
});

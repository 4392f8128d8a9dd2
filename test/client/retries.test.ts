/**
 * The client's retries, over real loopback sockets: the proxy in front of a fault upstream
 * (test/support/erp-front.ts) in front of the ERP double. Each case counts the calls the ERP was
 * asked to run and the calls that reached the ERP double, and shows that a call that may have
 * run was never sent twice: retries happen only after -32004 (did not run) and lock conflicts
 * (409, rolled back).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ErpError,
  ErpProxy,
  ErpProxyError,
  type ErpProxyOptions,
  type RetryEvent,
} from '../../client/src/index.ts';
import type { ErpDouble } from '../erp-double/index.ts';
import { type ErpFront, startErpFront } from '../support/erp-front.ts';
import { USERS, useErpDouble, useProxy } from '../support/fixtures.ts';
import { TEST_PROXY_KEY } from '../support/proxy-harness.ts';
import { recordingFetch, type SentCall } from '../support/recording-fetch.ts';

const lockError = {
  name: 'odoo.exceptions.LockError',
  message: 'Cannot obtain a lock on the record: another transaction holds it.',
  arguments: ['Cannot obtain a lock on the record: another transaction holds it.'],
  context: {},
  debug: 'odoo.exceptions.LockError: Cannot obtain a lock on the record\n',
};
const LOCK_CONFLICT = { status: 409, body: JSON.stringify(lockError) };
const userError = {
  name: 'odoo.exceptions.UserError',
  message: 'The record is archived.',
  arguments: ['The record is archived.'],
  context: {},
  debug: 'odoo.exceptions.UserError: The record is archived.\n',
};

const fronts: ErpFront[] = [];
afterEach(async () => {
  for (const front of fronts.splice(0)) await front.close();
});

async function frontOf(double: ErpDouble): Promise<ErpFront> {
  const front = await startErpFront(double.url);
  fronts.push(front);
  return front;
}

/** The JSON-2 and execute_kw calls that reached the ERP double (so ran there). */
function ranOnErp(double: ErpDouble): number {
  return double.requests.filter(
    (request) => request.path.startsWith('/json/2/') || request.body.includes('"execute_kw"'),
  ).length;
}

describe('client retries against ERP 19', () => {
  const double = useErpDouble({ mode: '19' });
  const proxy = useProxy();

  function clientFor(
    front: ErpFront,
    options: Pick<ErpProxyOptions, 'retries' | 'timeoutSeconds' | 'maxRetryWaitSeconds' | 'onRetry'> = {},
    after?: (call: SentCall) => Promise<void> | void,
  ) {
    const recording = recordingFetch(after);
    const erp = new ErpProxy({
      url: proxy.url,
      apiKey: TEST_PROXY_KEY,
      fetch: recording.fetch,
      ...options,
    }).erp({
      url: front.url,
      db: USERS.adminA.db,
      apiKey: USERS.adminA.apiKey,
    });
    return { recording, erp, executes: () => recording.to('/v2/erp/execute') };
  }

  it('an ERP that refuses the first connection: -32004, retried once, run once', async () => {
    const front = await frontOf(double);
    let reopened = false;
    const { erp, executes } = clientFor(front, {}, async (call) => {
      // The refusal has been answered: let the ERP listen again before the client retries.
      if (call.path === '/v2/erp/execute' && !reopened) {
        reopened = true;
        await front.start();
      }
    });
    await erp.version();
    await front.stop();
    double.reset();
    expect(await erp.searchCount('res.partner', [['is_company', '=', true]])).toBeGreaterThan(0);
    expect(executes().map((call) => call.status)).toEqual([503, 200]);
    expect(front.executeCalls()).toHaveLength(1);
    expect(ranOnErp(double)).toBe(1);
  });

  it('an ERP that hangs: -32003 (may have run) is thrown, never retried', async () => {
    const front = await frontOf(double);
    front.plan = (call) => (call.path.startsWith('/json/2/') ? 'hang' : 'forward');
    const { erp, executes } = clientFor(front, { timeoutSeconds: 1 });
    double.reset();
    const error = await erp.create('res.partner', { name: 'hangs' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ErpProxyError);
    expect(error).toMatchObject({ code: -32003, httpStatus: 504, mayHaveRun: true, retryable: false });
    expect(executes()).toHaveLength(1);
    expect(front.executeCalls()).toHaveLength(1);
  });

  it('a 409 lock conflict: retried, and the call runs once', async () => {
    const front = await frontOf(double);
    front.plan = (_call, executeIndex) => (executeIndex === 0 ? LOCK_CONFLICT : 'forward');
    const { erp, executes } = clientFor(front);
    double.reset();
    const id = await erp.create('res.partner', { name: 'after a lock conflict' });
    expect(typeof id).toBe('number');
    expect(executes()).toHaveLength(2);
    expect(front.executeCalls()).toHaveLength(2);
    expect(ranOnErp(double)).toBe(1);
    // The retry is the same call: the same envelope id.
    expect(executes()[1]?.body.id).toBe(executes()[0]?.body.id);
  });

  it('a 409 that persists: `retries` retries, then ErpError 409 with the exception class', async () => {
    const front = await frontOf(double);
    front.plan = (call) => (call.path.startsWith('/json/2/') ? LOCK_CONFLICT : 'forward');
    const { erp } = clientFor(front, { retries: 1 });
    double.reset();
    const error = await erp.write('res.partner', [1], { name: 'locked' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ErpError);
    expect(error).toMatchObject({ code: 409, name: 'odoo.exceptions.LockError', retryable: true });
    expect(front.executeCalls()).toHaveLength(2);
    expect(ranOnErp(double)).toBe(0);
  });

  it('an ERP that keeps answering 503: -32004 retried `retries` times (default 2), honouring Retry-After', async () => {
    const front = await frontOf(double);
    front.plan = (call) =>
      call.path.startsWith('/json/2/')
        ? { status: 503, headers: { 'retry-after': '0' }, body: '{}' }
        : 'forward';
    const { erp } = clientFor(front);
    const error = await erp.unlink('res.partner', [1]).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ErpProxyError);
    expect(error).toMatchObject({
      code: -32004,
      httpStatus: 503,
      mayHaveRun: false,
      retryable: true,
      retryAfterSeconds: 0,
    });
    expect(front.executeCalls()).toHaveLength(3);
  });

  it('a Retry-After longer than the client waits: not retried', async () => {
    const front = await frontOf(double);
    front.plan = (call) =>
      call.path.startsWith('/json/2/')
        ? { status: 429, headers: { 'retry-after': '3600' }, body: '{}' }
        : 'forward';
    const { erp } = clientFor(front);
    const error = await erp.searchCount('res.partner').catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: -32004, retryable: true, retryAfterSeconds: 3600 });
    expect(front.executeCalls()).toHaveLength(1);
  });

  it('maxRetryWaitSeconds: a Retry-After longer than the cap is not waited for, the error is returned', async () => {
    const front = await frontOf(double);
    front.plan = (call) =>
      call.path.startsWith('/json/2/')
        ? { status: 429, headers: { 'retry-after': '3' }, body: '{}' }
        : 'forward';
    const events: RetryEvent[] = [];
    const { erp } = clientFor(front, { maxRetryWaitSeconds: 2, onRetry: (event) => events.push(event) });
    const error = await erp.searchCount('res.partner').catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: -32004, retryable: true, retryAfterSeconds: 3 });
    expect(front.executeCalls()).toHaveLength(1);
    expect(events).toEqual([]);
  });

  it('onRetry sees each wait: the retry, the wait (within the cap), the error, the id and the key', async () => {
    const front = await frontOf(double);
    front.plan = (call) =>
      call.path.startsWith('/json/2/')
        ? { status: 503, headers: { 'retry-after': '0' }, body: '{}' }
        : 'forward';
    const events: RetryEvent[] = [];
    const { erp, executes } = clientFor(front, {
      retries: 3,
      maxRetryWaitSeconds: 0.3,
      onRetry: (event) => events.push(event),
    });
    const error = await erp.create('res.partner', { name: 'waits' }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: -32004, httpStatus: 503 });
    expect(front.executeCalls()).toHaveLength(4);
    expect(events.map((event) => event.retry)).toEqual([1, 2, 3]);
    // The back-off's waits (125-250, 250-500, 500-1000 ms) cut to the 300 ms cap.
    const [first, second, third] = events.map((event) => event.waitMs);
    expect(first).toBeGreaterThanOrEqual(125);
    expect(first).toBeLessThanOrEqual(250);
    expect(second).toBeGreaterThanOrEqual(250);
    expect(second).toBeLessThanOrEqual(300);
    expect(third).toBe(300);
    const sent = executes()[0];
    for (const event of events) {
      expect(event.error).toBeInstanceOf(ErpProxyError);
      expect(event.error.code).toBe(-32004);
      expect(event.id).toBe(sent?.body.id);
      expect(event.idempotencyKey).toBe(sent?.headers.get('idempotency-key'));
      expect(event.idempotencyKey).toMatch(/^[0-9A-Z]{26}$/);
    }
  });

  it('an onRetry that throws stops the call: its error is thrown, nothing more is sent', async () => {
    const front = await frontOf(double);
    front.plan = (_call, executeIndex) => (executeIndex === 0 ? LOCK_CONFLICT : 'forward');
    const stop = new Error('the caller stops here');
    const { erp } = clientFor(front, {
      onRetry: () => {
        throw stop;
      },
    });
    await expect(erp.searchCount('res.partner')).rejects.toBe(stop);
    expect(front.executeCalls()).toHaveLength(1);
  });

  it('refuses a maxRetryWaitSeconds below 0 or not a number, and an onRetry that is not a function', () => {
    const base = { url: 'http://127.0.0.1:1', apiKey: TEST_PROXY_KEY };
    expect(() => new ErpProxy({ ...base, maxRetryWaitSeconds: -1 })).toThrow(/maxRetryWaitSeconds must be/);
    expect(() => new ErpProxy({ ...base, maxRetryWaitSeconds: Number.NaN })).toThrow(
      /maxRetryWaitSeconds must be/,
    );
    expect(() => new ErpProxy({ ...base, onRetry: 'log' as unknown as () => void })).toThrow(
      /onRetry must be a function/,
    );
    expect(new ErpProxy(base).maxRetryWaitSeconds).toBe(60);
  });

  it('retries: 0 sends a call once, even when a retry would be safe', async () => {
    const front = await frontOf(double);
    front.plan = (_call, executeIndex) => (executeIndex === 0 ? LOCK_CONFLICT : 'forward');
    const { erp } = clientFor(front, { retries: 0 });
    await expect(erp.searchCount('res.partner')).rejects.toMatchObject({ code: 409 });
    expect(front.executeCalls()).toHaveLength(1);
  });

  it('any other ERP error (422) is not retried', async () => {
    const front = await frontOf(double);
    front.plan = (call) =>
      call.path.startsWith('/json/2/') ? { status: 422, body: JSON.stringify(userError) } : 'forward';
    const { erp } = clientFor(front);
    const error = await erp.write('res.partner', [1], { name: 'x' }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 422, name: 'odoo.exceptions.UserError', retryable: false });
    expect(front.executeCalls()).toHaveLength(1);
  });
});

describe('client retries against ERP 17 (v1)', () => {
  const double = useErpDouble({ mode: '17' });
  const proxy = useProxy();

  it('a lock conflict on v1 (code 0, LockError) is retried too, and runs once', async () => {
    const front = await frontOf(double);
    front.plan = (call, executeIndex) => {
      if (executeIndex !== 0) return 'forward';
      const { id } = JSON.parse(call.body) as { id: unknown };
      const error = {
        code: 200,
        message: 'Odoo Server Error',
        data: { ...lockError, exception_type: 'user_error' },
      };
      return { status: 200, body: JSON.stringify({ jsonrpc: '2.0', id, error }) };
    };
    const recording = recordingFetch();
    const erp = new ErpProxy({ url: proxy.url, apiKey: TEST_PROXY_KEY, fetch: recording.fetch }).erp({
      url: front.url,
      db: USERS.adminA.db,
      apiKey: USERS.adminA.apiKey,
      userId: USERS.adminA.uid,
    });
    double.reset();
    const id = await erp.create('res.partner', { name: 'v1 after a lock conflict' });
    expect(typeof id).toBe('number');
    expect(recording.to('/api/erp/execute')).toHaveLength(2);
    expect(front.executeCalls()).toHaveLength(2);
    expect(ranOnErp(double)).toBe(1);
  });
});

describe('client failures on the way to the proxy', () => {
  it('a proxy that refuses the connection: -32004 with HTTP status 0, retried', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const recording = recordingFetch();
    const erpProxy = new ErpProxy({
      url: `http://127.0.0.1:${port}`,
      apiKey: TEST_PROXY_KEY,
      retries: 1,
      fetch: recording.fetch,
    });
    const error = await erpProxy.version('http://127.0.0.1:8069').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ErpProxyError);
    expect(error).toMatchObject({ code: -32004, httpStatus: 0, mayHaveRun: false, retryable: true });
    expect((error as Error).message).toMatch(/ECONNREFUSED.*did not run/);
    expect(recording.sent).toHaveLength(2);
  });

  it('a proxy that never answers: the client gives up a little after timeoutSeconds, -32003, not retried', async () => {
    const sockets = new Set<Socket>();
    let received = 0;
    const silent: Server = createServer(() => {
      received += 1;
    });
    silent.on('connection', (socket: Socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      const erpProxy = new ErpProxy({
        url: `http://127.0.0.1:${port}`,
        apiKey: TEST_PROXY_KEY,
        timeoutSeconds: 1,
      });
      const error = await erpProxy.version('http://127.0.0.1:8069').catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ErpProxyError);
      expect(error).toMatchObject({ code: -32003, httpStatus: 0, mayHaveRun: true, retryable: false });
      // 1 s of x-request-timeout plus the margin: the proxy's own -32003 would have come first.
      expect((error as Error).message).toMatch(/within 4 s/);
      expect(received).toBe(1);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

/**
 * What the client tells of each answer (issue 58, items 5 and 7), off the network: the request id
 * (`Request-Id`, else API Gateway's `apigw-requestid`) and the parsed `Server-Timing`, on every
 * answer (`onAnswer`, each attempt's) and on the errors, a retried call's and a re-thrown one's
 * included. A `fetch` stub plays the proxy and the gateway in front of it.
 */
import { describe, expect, it } from 'vitest';
import {
  type AnswerInfo,
  ErpError,
  ErpProxy,
  ErpProxyError,
  parseServerTiming,
} from '../../client/src/index.ts';

const envelope = (body: object) => JSON.stringify({ jsonrpc: '2.0', id: 'x', ...body });

/** A `fetch` that answers each call with the next of `answers`. */
function stub(answers: readonly (() => Response)[]): typeof fetch {
  let next = 0;
  return (async () => {
    const answer = answers[Math.min(next, answers.length - 1)] as () => Response;
    next += 1;
    return answer();
  }) as typeof fetch;
}

const body = {
  model_id: 'res.partner',
  method: 'search_count',
  kwargs: {},
  erp_instance: { url: 'http://erp', db: 'd', api_key: 'k' },
};

describe('parseServerTiming', () => {
  it.each([
    ['erp;dur=12.5, store;dur=1, proxy;dur=0.8', { erp: 12.5, store: 1, proxy: 0.8 }],
    ['proxy;dur=3', { proxy: 3 }],
    ['erp;desc="the ERP";dur="7.25",cache;desc=hit', { erp: 7.25 }],
    ['  erp ; DUR = 2 ,, proxy;dur=x', { erp: 2 }],
  ])('%s', (header, expected) => {
    expect(parseServerTiming(header)).toEqual(expected);
  });

  it('is undefined without a metric that has a duration', () => {
    for (const header of [null, undefined, '', 'cache;desc=hit', ';dur=3']) {
      expect(parseServerTiming(header)).toBeUndefined();
    }
  });
});

describe('the request id and timing of an answer', () => {
  it("on a result: onAnswer, the client's then the call's, with the Request-Id and the Server-Timing", async () => {
    const seen: [string, AnswerInfo][] = [];
    const proxy = new ErpProxy({
      url: 'http://proxy',
      apiKey: 'proxy-key-0123456789',
      onAnswer: (answer) => seen.push(['client', answer]),
      fetch: stub([
        () =>
          new Response(envelope({ result: 7, error: null }), {
            headers: { 'request-id': 'req-1', 'server-timing': 'erp;dur=5, proxy;dur=1' },
          }),
      ]),
    });
    const result = await proxy.v2(body, { id: 'call-1', onAnswer: (answer) => seen.push(['call', answer]) });
    expect(result).toBe(7);
    const info = { requestId: 'req-1', serverTiming: { erp: 5, proxy: 1 }, httpStatus: 200, id: 'call-1' };
    expect(seen).toEqual([
      ['client', info],
      ['call', info],
    ]);
  });

  it("on the errors: the ERP's and the proxy's, and the gateway's own answer by its apigw-requestid", async () => {
    const erpError = await new ErpProxy({
      url: 'http://proxy',
      apiKey: 'proxy-key-0123456789',
      fetch: stub([
        () =>
          new Response(envelope({ result: null, error: { code: 404, message: 'no model', data: null } }), {
            headers: { 'request-id': 'req-2', 'server-timing': 'erp;dur=2, proxy;dur=1' },
          }),
      ]),
    })
      .v2(body)
      .catch((error: unknown) => error);
    expect(erpError).toBeInstanceOf(ErpError);
    expect(erpError).toMatchObject({ requestId: 'req-2', serverTiming: { erp: 2, proxy: 1 } });

    const gateway = await new ErpProxy({
      url: 'http://proxy',
      apiKey: 'proxy-key-0123456789',
      retries: 0,
      fetch: stub([
        () =>
          new Response('{"message":"Service Unavailable"}', {
            status: 503,
            headers: { 'apigw-requestid': 'JNu5ZhUgoAMEV2Q=' },
          }),
      ]),
    })
      .v2(body)
      .catch((error: unknown) => error);
    expect(gateway).toBeInstanceOf(ErpProxyError);
    expect(gateway).toMatchObject({
      httpStatus: 503,
      requestId: 'JNu5ZhUgoAMEV2Q=',
      serverTiming: undefined,
    });

    // Both headers: the proxy's own id is the one named.
    const both = await new ErpProxy({
      url: 'http://proxy',
      apiKey: 'proxy-key-0123456789',
      idempotency: false,
      fetch: stub([
        () =>
          new Response(
            envelope({ result: null, error: { code: -32000, message: 'Authentication failed' } }),
            {
              status: 401,
              headers: { 'request-id': 'req-3', 'apigw-requestid': 'gw-3' },
            },
          ),
      ]),
    })
      .v2(body)
      .catch((error: unknown) => error);
    expect(both).toMatchObject({ code: -32000, requestId: 'req-3' });
  });

  it("names each attempt of a retried call, and the last one's on the error a keyed call re-throws", async () => {
    const seen: AnswerInfo[] = [];
    const unavailable = (id: string) => () =>
      new Response(envelope({ result: null, error: { code: -32004, message: 'busy' } }), {
        status: 503,
        headers: { 'request-id': id, 'retry-after': '0', 'server-timing': 'proxy;dur=1' },
      });
    const error = await new ErpProxy({
      url: 'http://proxy',
      apiKey: 'proxy-key-0123456789',
      retries: 1,
      onAnswer: (answer) => seen.push(answer),
      fetch: stub([unavailable('try-1'), unavailable('try-2')]),
    })
      .v2({ ...body, method: 'create', kwargs: { vals_list: [{}] } })
      .catch((thrown: unknown) => thrown);
    expect(seen.map((answer) => answer.requestId)).toEqual(['try-1', 'try-2']);
    expect(error).toBeInstanceOf(ErpProxyError);
    expect(error).toMatchObject({
      requestId: 'try-2',
      serverTiming: { proxy: 1 },
      idempotencyKey: expect.any(String),
    });
  });

  it('has none when no answer came', async () => {
    const seen: AnswerInfo[] = [];
    const error = await new ErpProxy({
      url: 'http://proxy',
      apiKey: 'proxy-key-0123456789',
      retries: 0,
      onAnswer: (answer) => seen.push(answer),
      fetch: (async () => {
        throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
      }) as typeof fetch,
    })
      .v2(body)
      .catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ connectionLost: true, requestId: undefined, serverTiming: undefined });
    expect(seen).toEqual([]);
  });

  it('refuses an onAnswer that is not a function', () => {
    expect(
      () => new ErpProxy({ url: 'http://proxy', apiKey: 'k', onAnswer: 'log' as unknown as () => void }),
    ).toThrow(/onAnswer must be a function/);
  });
});

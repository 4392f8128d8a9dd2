/**
 * The chain builder (lambdas/handlers/chain.ts): the order rules of the chain are types, observe
 * is always outermost, no step ends the chain early, and the request log line and the metrics are
 * assembled from what the steps, the handler and a thrown error return.
 */
import { describe, expect, it } from 'vitest';
import { forwardV1 } from '../../lambdas/core/forward.ts';
import { factsOf, withFacts } from '../../lambdas/core/request-facts.ts';
import { bodyChain, Chain } from '../../lambdas/handlers/chain.ts';
import { type BaseRuntime, createBaseRuntime } from '../../lambdas/handlers/runtime-base.ts';
import { apiKeyAuth } from '../../lambdas/middleware/api-key-auth.ts';
import { envelopeIdPeek } from '../../lambdas/middleware/envelope-id.ts';
import { toInboundCall } from '../../lambdas/middleware/inbound-edge.ts';
import { jsonBody } from '../../lambdas/middleware/json-body.ts';
import { licenseCheck } from '../../lambdas/middleware/license-check.ts';
import { type NoValues, step } from '../../lambdas/middleware/step.ts';
import type { ProxyEvent } from '../../lambdas/middleware/types.ts';
import { LocalMetricsStore } from '../../lambdas/operator/local-metrics-store.ts';
import { loadConfig } from '../../lambdas/platform/config.ts';
import { UpstreamTimeoutError } from '../../lambdas/platform/errors.ts';
import { captureLogLines } from '../support/captured-output.ts';
import { httpApiEvent } from '../support/http-api-event.ts';
import { TEST_PROXY_KEY } from '../support/test-secrets.ts';

const route = { method: 'POST', path: '/api/erp/execute' } as const;

function runtime(): { runtime: BaseRuntime; store: LocalMetricsStore } {
  const store = new LocalMetricsStore();
  const config = loadConfig({ PROXY_API_KEY: TEST_PROXY_KEY, LOG_LEVEL: 'INFO' });
  const license = {
    getLicense: async () => ({ licensee: 'T', valid_until: '2099-12-31', is_valid: true, days_left: 9 }),
  };
  return { runtime: createBaseRuntime(config, { license }, store), store };
}

function event(body = '{"id":"e-1"}'): ProxyEvent {
  return httpApiEvent(route, { headers: { 'x-api-key': TEST_PROXY_KEY }, body });
}

const context = () => ({ awsRequestId: 'req-1', functionName: 'erp-proxy-execute-v1' }) as never;

/**
 * Chains built in an order the README forbids: none of them type-checks (`npm run typecheck`
 * fails when one of the `@ts-expect-error` lines below compiles).
 */
function chainsInTheWrongOrder(base: BaseRuntime): unknown[] {
  const keys = base.keys;
  return [
    // The body before the caller is known: unbounded work for anyone.
    // @ts-expect-error jsonBody needs an authenticated, licensed caller
    Chain.start(base, 'v1').step(jsonBody()),
    // The license before the key: a caller without a key would learn about the license.
    // @ts-expect-error licenseCheck needs the caller apiKeyAuth returns
    Chain.start(base, 'v1').step(licenseCheck(base.license)),
    // The body after the key but without the license check.
    // @ts-expect-error jsonBody needs the license step's value too
    Chain.start(base, 'v1').step(apiKeyAuth(keys)).step(jsonBody()),
    // An execute handler on a chain whose steps never read the body.
    Chain.start(base, 'v1')
      .step(apiKeyAuth(keys))
      .handler((event, known, ctx) =>
        // @ts-expect-error the handler's values have no body without the jsonBody step
        forwardV1(toInboundCall(event, ctx, known), {} as never),
      ),
  ];
}

describe('the chain builder', () => {
  it('refuses a wrong order at compile time (the @ts-expect-error lines above), not at run time', () => {
    expect(chainsInTheWrongOrder(runtime().runtime)).toHaveLength(4);
  });

  it('builds the execute chain in the documented order (the order a step needs compiles)', () => {
    const { runtime: base } = runtime();
    const chain = Chain.start(base, 'v1')
      .step(envelopeIdPeek())
      .step(apiKeyAuth(base.keys))
      .step(licenseCheck(base.license))
      .step(jsonBody());
    expect(chain).toBeInstanceOf(Chain);
    expect(bodyChain(base, 'v1')).toBeInstanceOf(Chain);
  });

  it('logs and counts the facts the steps and the handler returned, once', async () => {
    const lines = captureLogLines();
    const { runtime: base, store } = runtime();
    const handle = bodyChain(base, 'v1').handler(async (_event, known) => ({
      response: { statusCode: 200, headers: {}, body: `{"seen":${JSON.stringify(known.envelopeId)}}` },
      facts: {
        action: 'search_read',
        model: 'res.partner',
        erpHost: 'erp.example.com',
        erpDb: 'erp_a',
        upstreamStatus: 200,
        upstreamMs: 12.345,
        upstreamProtocol: 'jsonrpc',
        outcome: 'success',
      },
    }));

    const response = await handle(event(), context());

    expect(response).toMatchObject({ statusCode: 200, body: '{"seen":"e-1"}' });
    const logged = lines().filter((line) => line.message === 'request');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({
      envelope_id: 'e-1',
      caller: 'default',
      action: 'search_read',
      model: 'res.partner',
      erp_host: 'erp.example.com',
      erp_db: 'erp_a',
      upstream_status: 200,
      upstream_ms: 12.35,
      upstream_protocol: 'jsonrpc',
      outcome: 'success',
      http_status: 200,
      response_bytes: 14,
    });
    expect(store.families().find((f) => f.name === 'erp_proxy_upstream_calls')?.samples).toEqual([
      { labels: { api: 'v1', protocol: 'jsonrpc' }, value: 1 },
    ]);
  });

  it('logs what was learned before an error from the facts the error carries', async () => {
    const lines = captureLogLines();
    const { runtime: base } = runtime();
    const handle = bodyChain(base, 'v1').handler(async () => {
      throw withFacts(new UpstreamTimeoutError('The ERP did not answer'), {
        action: 'search_count',
        model: 'res.partner',
        erpHost: 'erp.example.com',
        upstreamMs: 15000,
      });
    });

    const response = await handle(event(), context());

    expect(response.statusCode).toBe(504);
    expect(JSON.parse(response.body)).toMatchObject({ id: 'e-1', error: { code: -32003 } });
    expect(lines().filter((line) => line.message === 'request')).toEqual([
      expect.objectContaining({
        level: 'WARN',
        action: 'search_count',
        model: 'res.partner',
        erp_host: 'erp.example.com',
        upstream_ms: 15000,
        caller: 'default',
        outcome: 'proxy_error',
        error_code: -32003,
        http_status: 504,
      }),
    ]);
  });

  it('keeps observe outermost: a refusal by a step is logged, with the facts of the steps before it', async () => {
    const lines = captureLogLines();
    const { runtime: base } = runtime();
    const handle = bodyChain(base, 'v1').handler(async () => {
      throw new Error('the handler must not run for a refused caller');
    });

    const refused = await handle(
      httpApiEvent(route, { headers: { 'x-api-key': 'not-a-key' }, body: '{"id":"e-2"}' }),
      context(),
    );

    expect(refused.statusCode).toBe(401);
    expect(lines().filter((line) => line.message === 'request')).toEqual([
      expect.objectContaining({
        envelope_id: 'e-2',
        outcome: 'proxy_error',
        error_code: -32000,
        http_status: 401,
      }),
    ]);
  });

  it('lets no step end the chain early: what a step returns goes to the record, not to Middy', async () => {
    const { runtime: base } = runtime();
    const answering = step<NoValues, { readonly answer: object }>('answering', () => ({
      values: { answer: { statusCode: 418, headers: {}, body: 'early' } },
    }));
    const probe = { awsRequestId: 'req-3' } as never;
    const request = { event: event(), context: probe, response: null, error: null, internal: {} } as never;
    expect(await answering.before(request)).toBeUndefined();

    const handle = Chain.start(base, 'v1')
      .step(answering)
      .handler(async (_event, known) => ({
        response: { statusCode: 200, headers: {}, body: JSON.stringify(Object.keys(known)) },
        facts: { outcome: 'success' },
      }));
    // The handler knows what observe gives every request (its trace, its store meter) and the step's value.
    expect(await handle(event(), context())).toMatchObject({
      statusCode: 200,
      body: '["trace","storeMeter","answer"]',
    });
  });
});

describe('facts an error carries', () => {
  it('keep the first facts attached (closest to the failure) over later ones, and leave a value that cannot carry them as it is', () => {
    const error = withFacts(withFacts(new Error('x'), { upstreamMs: 3 }), { upstreamMs: 9, action: 'read' });
    expect(factsOf(error)).toEqual({ upstreamMs: 3, action: 'read' });
    const frozen = Object.freeze(new Error('frozen'));
    expect(withFacts(frozen, { action: 'read' })).toBe(frozen);
    expect(factsOf(frozen)).toEqual({});
    expect(withFacts('text', { action: 'read' })).toBe('text');
    expect(factsOf(undefined)).toEqual({});
  });
});

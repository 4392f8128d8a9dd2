/**
 * Facts the edge learns once and hands on as values: the response encoding is negotiated once
 * (by the envelope middleware) and read by the core from the inbound call; the body and envelope
 * `id` the `jsonBody` step returned reach the inbound call as values.
 */
import { describe, expect, it } from 'vitest';
import { buildContext } from '../../../lambdas/local/server.ts';
import { toInboundCall } from '../../../lambdas/middleware/inbound-edge.ts';
import { jsonBody } from '../../../lambdas/middleware/json-body.ts';
import { responseEncodingOf } from '../../../lambdas/middleware/response-shaping.ts';
import type { ProxyRequest } from '../../../lambdas/middleware/types.ts';
import { httpApiEvent } from '../../support/http-api-event.ts';

const route = { method: 'POST', path: '/api/erp/execute' } as const;

/** What the `jsonBody` step returns for a request without a body. */
const noBody = { body: { ok: false as const }, envelopeId: null, callerName: 'test', policy: undefined };

function request(headers: Record<string, string>, body?: string): ProxyRequest {
  const event = httpApiEvent(route, { headers, ...(body === undefined ? {} : { body }) });
  const context = buildContext('execute-v1', 'req-1');
  return { event, context, response: null, error: null, internal: {} } as unknown as ProxyRequest;
}

describe('values the edge hands on', () => {
  it.each([
    ['gzip, deflate', 'gzip'],
    ['br;q=1, gzip;q=0.5', 'br'],
    ['identity', undefined],
  ])(
    'Accept-Encoding %j is negotiated to %j, the value the core reads and the response is compressed with',
    async (header, expected) => {
      const req = request({ 'accept-encoding': header });
      expect(toInboundCall(req.event, req.context, noBody).responseEncoding).toBe(expected);
      expect(responseEncodingOf(req.event)).toBe(expected);
      // Nothing is kept on the context (issue 34: no import circle through it).
      expect(req.context).not.toHaveProperty('responseEncoding');
    },
  );

  it('the body and envelope id the jsonBody step returned reach the inbound call as values', async () => {
    const req = request({}, '{"id":"a1","action":"search_count"}');
    const { values } = await jsonBody().run(req.event, {
      callerName: 'test',
      policy: undefined,
      licensed: true,
    });
    const inbound = toInboundCall(req.event, req.context, {
      ...values,
      callerName: 'test',
      policy: undefined,
    });
    expect(inbound.body).toMatchObject({ ok: true, value: { id: 'a1' } });
    expect(inbound.envelopeId).toBe('a1');
    // Who calls, as a value for the core: the key's name the key step returned.
    expect(inbound.identity).toEqual({ kind: 'key', name: 'test' });
  });
});

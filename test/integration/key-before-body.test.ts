/**
 * The key check comes before any unbounded work (README, "Order of checks"): over real HTTP, a
 * caller without a valid proxy key, or while the license is invalid, never gets its body parsed
 * or scanned; its envelope `id` is still echoed when the bounded look at the body's start finds
 * it. The same bodies with a valid key are parsed (the control that shows the spy sees a parse).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ENVELOPE_ID_PEEK_CHARS } from '../../lambdas/middleware/envelope-id.ts';
import { type Envelope, useProxy } from '../support/fixtures.ts';

/** A body that is costly to parse: valid start (with the id), then 1 MiB of nested brackets. */
const ATTACK_ID = 'attack-01';
const attackBody = `{"id":"${ATTACK_ID}","action":"search_count","model_id":"res.partner","params":${'['.repeat(1024 * 1024)}`;

/** Whether any JSON.parse call since the spy started was given more text than the bounded look reads. */
function parsedLongText(spy: { mock: { calls: unknown[][] } }): boolean {
  return spy.mock.calls.some(([text]) => typeof text === 'string' && text.length > ENVELOPE_ID_PEEK_CHARS);
}

const PATHS = ['/api/erp/execute', '/v2/erp/execute', '/api/erp/version'] as const;

describe('no body parse before the key check', () => {
  const proxy = useProxy();
  afterEach(() => {
    vi.restoreAllMocks();
  });

  describe.each(PATHS)('%s', (path) => {
    it.each([
      ['no key', {}],
      ['a wrong key', { 'x-api-key': 'not-a-proxy-key-0123456789' }],
    ])('with %s: 401, the id echoed, the body never parsed', async (_label, headers) => {
      // Prepare
      const parse = vi.spyOn(JSON, 'parse');
      const noKey = Object.keys(headers).length === 0;
      // Act
      const answer = await fetch(`${proxy.url}${path}`, {
        method: 'POST',
        headers: noKey
          ? { 'content-type': 'application/json' }
          : { 'content-type': 'application/json', ...headers },
        body: attackBody,
      });
      const text = await answer.text();
      // Assess
      expect(parsedLongText(parse)).toBe(false);
      parse.mockRestore();
      expect(answer.status).toBe(401);
      expect(JSON.parse(text)).toMatchObject({ id: ATTACK_ID, error: { code: -32000 } });
    });

    it('with a valid key: the body is parsed (control), and found not to be JSON', async () => {
      // Prepare
      const parse = vi.spyOn(JSON, 'parse');
      // Act
      const answer = await proxy.post(path, attackBody);
      // Assess
      expect(parsedLongText(parse)).toBe(true);
      parse.mockRestore();
      expect(answer.status).toBe(400);
      if (path === '/v2/erp/execute') {
        expect(answer.text).toMatch(/^body: the request body is not valid JSON/);
      } else {
        // Nothing of a body that could not be read is echoed.
        expect(answer.json as Envelope).toMatchObject({ id: null, error: { code: -32700 } });
      }
    });
  });

  it('an id past the bounded look: null when refused, echoed once the key is valid', async () => {
    // Prepare: a v1 body whose id comes after 5 KB of params.
    const late = {
      params: [[['name', '=', 'x'.repeat(5 * 1024)]]],
      id: 'late-id',
      action: 'search_count',
      model_id: 'res.partner',
    };
    // Act
    const refused = await proxy.post('/api/erp/execute', late, { 'x-api-key': 'not-a-proxy-key-0123456789' });
    const accepted = await proxy.post('/api/erp/execute', late);
    // Assess: the authenticated call is parsed whole (and refused for its missing erp_instance).
    expect(refused.json).toMatchObject({ id: null, error: { code: -32000 } });
    expect(accepted.json).toMatchObject({ id: 'late-id', error: { code: -32600 } });
  });
});

describe('no body parse while the license is invalid', () => {
  const proxy = useProxy({
    overrides: {
      license: {
        getLicense: () =>
          Promise.resolve({
            licensee: 'Example',
            valid_until: '2020-01-01',
            is_valid: false,
            reason: 'expired on 2020-01-01',
            days_left: -100,
          }),
      },
    },
  });

  it.each(PATHS)('%s: 403 with code 0, the id echoed, the body never parsed', async (path) => {
    // Prepare
    const parse = vi.spyOn(JSON, 'parse');
    // Act
    const answer = await proxy.post(path, attackBody);
    // Assess
    expect(parsedLongText(parse)).toBe(false);
    parse.mockRestore();
    expect(answer.status).toBe(403);
    expect(answer.json).toMatchObject({ id: ATTACK_ID, error: { code: 0 } });
  });
});

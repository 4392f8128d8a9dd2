/**
 * The Node 24 bundle check's own logic (bin/node24-bundles.ts; `.ci/run` runs the check itself):
 * every route of the route table is invoked, each case expects its status (a 200 without an error
 * unless it is an ERP error), the OAuth pass calls a tool with an access token, and an answer
 * that differs is found, whatever part of it differs but the Node version `GET /_/about` names.
 */
import { describe, expect, it } from 'vitest';
import {
  differences,
  invocations,
  type Outcome,
  oauthInvocations,
  unexpected,
} from '../../bin/node24-bundles.ts';
import { ROUTES, routeKeys } from '../../lambdas/platform/routes.ts';

const about = (node: string): Outcome => ({
  name: 'GET /_/about',
  answer: { statusCode: 200, headers: {}, body: JSON.stringify({ name: 'erp-proxy', runtime: { node } }) },
});
const answer = (name: string, statusCode: number, body: string): Outcome => ({
  name,
  answer: { statusCode, headers: { 'content-type': 'application/json' }, body },
});

describe('the Node 24 bundle check', () => {
  it('invokes every route key of the route table (refused methods included), each with its function', () => {
    const cases = invocations('http://127.0.0.1:1');
    const invoked = new Set(cases.map((c) => c.name.replace(/ #\d+$/, '')));
    for (const route of ROUTES) for (const key of routeKeys(route)) expect(invoked, key).toContain(key);
    for (const c of cases) {
      const route = ROUTES.find((r) => c.name.startsWith(`${r.method} ${r.path}`));
      if (route) expect(c.fn, c.name).toBe(route.fn);
    }
  });

  it('finds no difference between equal runs, and /_/about naming each its own Node', () => {
    const outcomes = [answer('POST /api/erp/execute', 200, '{"result":18}')];
    expect(
      differences(
        { node: 'v20.20.2', outcomes: [...outcomes, about('v20.20.2')] },
        { node: 'v24.21.0', outcomes: [...outcomes, about('v24.21.0')] },
      ),
    ).toEqual([]);
  });

  it("reads Server-Timing by its parts, not this run's durations", () => {
    const timed = (name: string, timing: string): Outcome => ({
      name,
      answer: { statusCode: 200, headers: { 'server-timing': timing }, body: '{"result":18}' },
    });
    const base = { node: 'v20.20.2', outcomes: [timed('a', 'erp;dur=18.79, proxy;dur=13.18')] };
    expect(
      differences(base, { node: 'v24.21.0', outcomes: [timed('a', 'erp;dur=17.4, proxy;dur=2')] }),
    ).toEqual([]);
    expect(differences(base, { node: 'v24.21.0', outcomes: [timed('a', 'proxy;dur=2')] })).toHaveLength(1);
  });

  it('finds a body, a status, a header, a throw or a missing answer that differs', () => {
    const base = {
      node: 'v20.20.2',
      outcomes: [answer('a', 200, '{"result":18}'), answer('b', 200, 'text'), about('v20.20.2')],
    };
    const changed = (outcomes: Outcome[]) => differences(base, { node: 'v24.21.0', outcomes });
    expect(changed([answer('a', 200, '{"result":19}'), base.outcomes[1]!, about('v24.21.0')])).toHaveLength(
      1,
    );
    expect(changed([answer('a', 500, '{"result":18}'), base.outcomes[1]!, about('v24.21.0')])).toHaveLength(
      1,
    );
    expect(
      changed([
        {
          name: 'a',
          answer: { statusCode: 200, headers: { 'content-type': 'text/html' }, body: '{"result":18}' },
        },
        base.outcomes[1]!,
        about('v24.21.0'),
      ]),
    ).toHaveLength(1);
    expect(changed([{ name: 'a', threw: 'boom' }, base.outcomes[1]!, about('v24.21.0')])).toHaveLength(1);
    expect(changed([base.outcomes[0]!, base.outcomes[1]!])).toHaveLength(1);
    // /_/about naming another Node than the one that ran it.
    expect(changed([base.outcomes[0]!, base.outcomes[1]!, about('v22.0.0')])).toHaveLength(1);
  });

  it('expects 200 of every route but the refused methods (405), the OAuth metadata while OAuth is off (404) and a wrong key (401)', () => {
    const expected = Object.fromEntries(invocations('http://127.0.0.1:1').map((c) => [c.name, c.expected]));
    expect(expected).toMatchObject({
      'POST /api/erp/execute #1': { status: 200 },
      'POST /api/erp/execute #2': { status: 200, error: true },
      'POST /mcp #3': { status: 200 },
      'GET /mcp': { status: 405 },
      'GET /.well-known/oauth-protected-resource/mcp': { status: 404 },
      'POST /api/erp/execute, a wrong key': { status: 401 },
      'the scheduled license check': { status: 'result' },
      'the scheduled brakes report': { status: 'result' },
      'GET /_/brakes': { status: 403 },
      'POST /_/brakes/release': { status: 403 },
    });
    const served = Object.entries(expected).filter(([, e]) => e.status === 200 && e.error === undefined);
    expect(served.length).toBeGreaterThanOrEqual(12);
  });

  it('calls a tool with the access token alone in the OAuth pass, and reads both metadata routes', () => {
    const cases = oauthInvocations('http://127.0.0.1:1', 'the.access.token');
    const withToken = cases.find((c) => c.name.includes('with an access token'));
    if (withToken === undefined) throw new Error('no tools/call with an access token');
    const headers = (withToken.event as { headers: Record<string, string> }).headers;
    expect(headers.authorization).toBe('Bearer the.access.token');
    expect(Object.keys(headers).filter((name) => name === 'x-api-key' || name.startsWith('x-erp-'))).toEqual(
      [],
    );
    expect(withToken.expected).toEqual({ status: 200 });
    expect(cases.filter((c) => c.name.includes('oauth-protected-resource')).map((c) => c.expected)).toEqual([
      { status: 200 },
      { status: 200 },
    ]);
    expect(cases.every((c) => c.fn === 'mcp')).toBe(true);
  });

  it('finds an answer its case does not expect: another status, an error in a 200, a tool error, a throw', () => {
    const ok = { status: 200 } as const;
    expect(unexpected(answer('a', 200, '{"result":18,"error":null}'), ok)).toBeUndefined();
    expect(unexpected(answer('a', 200, '# HELP x\n'), ok)).toBeUndefined();
    expect(unexpected(answer('a', 401, '{}'), ok)).toBe('answered 401, expected 200');
    expect(unexpected(answer('a', 200, '{"error":{"code":-32005}}'), ok)).toBe(
      'a 200 whose body is an error',
    );
    expect(unexpected(answer('a', 200, '{"result":{"isError":true}}'), ok)).toBe(
      'a 200 whose body is an error',
    );
    expect(unexpected(answer('a', 200, '{"result":18}'), { status: 200, error: true })).toBe(
      'a 200 without the error it must carry',
    );
    expect(
      unexpected(answer('a', 200, '{"error":{"code":0}}'), { status: 200, error: true }),
    ).toBeUndefined();
    expect(unexpected({ name: 'a', threw: 'boom' }, ok)).toBe('threw: boom');
    expect(unexpected({ name: 'job', answer: { checked: true } }, { status: 'result' })).toBeUndefined();
    expect(unexpected(answer('a', 405, ''), { status: 405 })).toBeUndefined();
  });
});

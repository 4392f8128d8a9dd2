/**
 * The Node 24 bundle check's own logic (bin/node24-bundles.ts; `.ci/run` runs the check itself):
 * every route of the route table is invoked, and an answer that differs is found, whatever part
 * of it differs but the Node version `GET /_/about` names.
 */
import { describe, expect, it } from 'vitest';
import { differences, invocations, type Outcome } from '../../bin/node24-bundles.ts';
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
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchIdentity, parseIdentities } from '../../lambdas/protocol/oauth/identities.ts';
import { SECRET_VALUE_SOURCES } from '../../lib/erp-proxy-stack.ts';

const ERP_KEY = 'erp-api-key-0123456789abcdef';
const entry = (name: string, claim: string, value: string, extra: Record<string, unknown> = {}) => ({
  name,
  match: { claim, value },
  erp: { url: 'https://erp.example.com', db: 'prod', user_id: 7, api_key: ERP_KEY },
  ...extra,
});
const parse = (identities: unknown[]) => parseIdentities(JSON.stringify({ identities }));

describe('parseIdentities', () => {
  it('reads the map: connection, user id and a compiled policy', () => {
    const [sales, alice] = parse([
      entry('sales', 'groups', 'sales', { policy: { access: 'read', models: ['res.partner', 'sale.*'] } }),
      entry('alice', 'sub', 'alice-123'),
    ]);
    expect(sales?.erp).toEqual({ url: 'https://erp.example.com', db: 'prod', userId: 7, apiKey: ERP_KEY });
    expect(sales?.policy?.access).toBe('read');
    expect(alice?.policy).toBeUndefined();
  });

  it.each([
    [
      [entry('sales', 'groups', 'sales', { polcy: {} })],
      /identities\.0 \(identity "sales"\): unknown field "polcy"/,
    ],
    [
      [entry('sales', 'groups', 'sales', { policy: { access: 'all' } })],
      /identities\.0\.policy\.access \(identity "sales"\)/,
    ],
    [
      [{ ...entry('b', 'sub', 'x'), erp: { url: 'ftp://erp', db: 'p', api_key: ERP_KEY } }],
      /identities\.0\.erp\.url \(identity "b"\): expected an http\(s\) URL/,
    ],
    [
      [{ ...entry('c', 'sub', 'x'), erp: { url: 'https://e', db: 'p', api_key: ERP_KEY, user_id: -1 } }],
      /user_id/,
    ],
    [
      [{ ...entry('d', 'sub', 'x'), erp: { url: 'https://e', db: 'a\nb', api_key: ERP_KEY } }],
      /identities\.0\.erp\.db \(identity "d"\): printable ASCII/,
    ],
  ])('fails closed, naming the entry and field, never the ERP key (%#)', (identities, message) => {
    let thrown: unknown;
    try {
      parse(identities);
    } catch (error) {
      thrown = error;
    }
    expect(String(thrown)).toMatch(message);
    expect(String(thrown)).not.toContain(ERP_KEY);
  });

  it("the stack's first value, an empty map, parses: every signed-in person is unmapped", () => {
    expect(parseIdentities(SECRET_VALUE_SOURCES.oauthIdentities)).toEqual([]);
  });

  it('with several issuers, each entry names its issuer, one of them (sub and groups are per issuer)', () => {
    const issuers = ['https://a.example.com', 'https://b.example.com'];
    expect(() =>
      parseIdentities(JSON.stringify({ identities: [entry('s', 'sub', 'x')] }), { issuers }),
    ).toThrow(/identities\.0\.match\.issuer \(identity "s"\): required when several issuers are accepted/);
    const other = {
      ...entry('s', 'sub', 'x'),
      match: { claim: 'sub', value: 'x', issuer: 'https://c.example.com' },
    };
    expect(() => parseIdentities(JSON.stringify({ identities: [other] }), { issuers })).toThrow(
      /not one of MCP_OAUTH_ISSUER/,
    );
    const [mapped] = parseIdentities(
      JSON.stringify({
        identities: [{ ...entry('s', 'sub', 'x'), match: { claim: 'sub', value: 'x', issuer: issuers[0] } }],
      }),
      { issuers },
    );
    // The same sub from the other issuer is another person.
    expect(matchIdentity(mapped ? [mapped] : [], { iss: issuers[0], sub: 'x' })?.name).toBe('s');
    expect(matchIdentity(mapped ? [mapped] : [], { iss: issuers[1], sub: 'x' })).toBeUndefined();
  });

  it('never echoes a value of the document in an error (property)', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 12 }), (secret) => {
        const bad = [
          { ...entry('n', 'sub', 'x'), erp: { url: secret, db: secret, api_key: 5, user_id: secret } },
        ];
        try {
          parse(bad);
        } catch (error) {
          expect(String(error)).not.toContain(secret);
        }
      }),
    );
  });
});

describe('matchIdentity', () => {
  const identities = parse([
    entry('alice', 'sub', 'alice-123'),
    entry('sales', 'cognito:groups', 'sales'),
    entry('everyone', 'email_verified_domain', 'example.com'),
  ]);

  it('the first match wins: sub, then an array claim containing the value, then a string claim', () => {
    expect(matchIdentity(identities, { sub: 'alice-123', 'cognito:groups': ['sales'] })?.name).toBe('alice');
    expect(matchIdentity(identities, { sub: 'bob', 'cognito:groups': ['billing', 'sales'] })?.name).toBe(
      'sales',
    );
    expect(matchIdentity(identities, { sub: 'carol', email_verified_domain: 'example.com' })?.name).toBe(
      'everyone',
    );
  });

  it('matches nothing for other values, other types, or inherited names', () => {
    expect(matchIdentity(identities, { sub: 'ALICE-123' })).toBeUndefined();
    expect(matchIdentity(identities, { 'cognito:groups': 'sales-team' })).toBeUndefined();
    expect(matchIdentity(identities, { 'cognito:groups': [['sales']] })).toBeUndefined();
    expect(matchIdentity(parse([entry('x', 'constructor', 'Object')]), {})).toBeUndefined();
  });
});

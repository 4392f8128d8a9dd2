import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { baseUrl } from '../../lambdas/core/schemas.ts';
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
    expect(sales?.erp).toEqual({
      baseUrl: new URL('https://erp.example.com'),
      db: 'prod',
      apiKey: ERP_KEY,
      uid: 7,
    });
    expect(alice?.erp.uid).toBe(7);
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

  describe("the identity URL rule: a call's erp_instance.url schema, checked when the map is read", () => {
    const withUrl = (url: unknown) => [
      { ...entry('sales', 'groups', 'sales'), erp: { url, db: 'prod', api_key: ERP_KEY } },
    ];
    const refusal = (url: unknown) => {
      try {
        parse(withUrl(url));
      } catch (error) {
        return String(error);
      }
      return undefined;
    };

    it.each([
      ['https://erp.example.com/?db=prod', 'must be a base URL, without query or fragment'],
      ['https://erp.example.com/#top', 'must be a base URL, without query or fragment'],
      ['erp.example.com', 'must be an absolute URL such as https://erp.example.com'],
      ['', 'must not be empty'],
      [`https://${'a'.repeat(250)}.example.com`, 'the host name is longer than 253 characters'],
      ['ftp://erp.example.com', 'expected an http(s) URL without user info'],
      ['https://admin:secret@erp.example.com', 'expected an http(s) URL without user info'],
    ])('%s is refused at load, naming the entry and the rule, never a header', (url, rule) => {
      const message = refusal(url);
      expect(message).toBe(`Error: OAuth identities: identities.0.erp.url (identity "sales"): ${rule}`);
      expect(message).not.toMatch(/x-erp|header/);
      expect(message).not.toContain('secret');
    });

    it('the URLs erp_instance.url accepts load, a path prefix included, as parsed URLs', () => {
      for (const url of ['https://erp.example.com', 'http://127.0.0.1:8069/', 'https://example.com/odoo'])
        expect(parse(withUrl(url))[0]?.erp.baseUrl).toEqual(new URL(url));
    });

    it('agrees with erp_instance.url on every URL: accepted by one, accepted by the other (property)', () => {
      fc.assert(
        fc.property(
          fc.oneof(fc.webUrl({ withQueryParameters: true, withFragments: true }), fc.string()),
          (url) => {
            const call = baseUrl().safeParse(url);
            const loaded = refusal(url) === undefined;
            const plainHttp =
              call.success &&
              ['http:', 'https:'].includes(call.data.protocol) &&
              call.data.username === '' &&
              call.data.password === '';
            expect(loaded).toBe(plainHttp);
          },
        ),
      );
    });
  });

  it('a database or an ERP key that cannot travel as a header value fails the map at load', () => {
    const withErp = (erp: Record<string, unknown>) => [
      {
        ...entry('ops', 'sub', 'x'),
        erp: { url: 'https://e.example.com', db: 'prod', api_key: ERP_KEY, ...erp },
      },
    ];
    expect(() => parse(withErp({ db: 'd'.repeat(5000) }))).toThrow(
      /identities\.0\.erp\.db \(identity "ops"\): at most 4096 characters/,
    );
    expect(() => parse(withErp({ api_key: 'key\u0001' }))).toThrow(
      /identities\.0\.erp\.api_key \(identity "ops"\): printable ASCII/,
    );
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

/**
 * `POST /mcp` as an OAuth 2.1 resource server, over real HTTP: the local proxy with OAuth on, a real
 * OpenID provider on loopback (oidc-provider), and the ERP double. The MCP SDK's client completes
 * its OAuth flow (discovery from our 401 and protected resource metadata, registration,
 * authorization code with PKCE and our resource, the person's sign-in driven by the test) and then
 * lists and calls tools as the Odoo user the identity map names. Hostile tokens are refused with
 * the right status and header, and nothing reaches the ERP.
 */
import { createHmac } from 'node:crypto';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { USERS, useErpDouble } from '../support/fixtures.ts';
import { json, toolError } from '../support/mcp-client.ts';
import { TestConnectorAuth } from '../support/oauth-client.ts';
import { type OidcIssuer, startOidcIssuer } from '../support/oidc-issuer.ts';
import { freePort, type ProxyHarness, startProxy, TEST_PROXY_KEY } from '../support/proxy-harness.ts';
import { startTokenIssuer, type TokenIssuer } from '../support/token-issuer.ts';

const admin = USERS.adminA;
const limited = USERS.limitedA;

describe('POST /mcp with OAuth', () => {
  const double = useErpDouble({ mode: '19' });
  let oidc: OidcIssuer;
  let forged: TokenIssuer;
  /** A second issuer the proxy trusts, minting the tokens a real one would not (expired, ...). */
  let trusted: TokenIssuer;
  let proxy: ProxyHarness;
  let resource = '';

  /** A POST /mcp with only these headers (no proxy key unless given). */
  async function postMcp(body: unknown, headers: Record<string, string>) {
    const response = await fetch(resource, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      json: text ? (JSON.parse(text) as unknown) : undefined,
    };
  }

  beforeAll(async () => {
    oidc = await startOidcIssuer({
      accounts: {
        alice: { groups: ['sales'] },
        bob: { groups: ['reporting'] },
        mallory: { groups: ['nobody'] },
      },
    });
    const port = await freePort();
    resource = `http://127.0.0.1:${port}/mcp`;
    // A second issuer the proxy does not trust, with keys of its own (the hostile tokens).
    forged = await startTokenIssuer(resource);
    trusted = await startTokenIssuer(resource);
    const connection = (user: typeof admin) => ({
      url: double.url,
      db: 'erp_a',
      user_id: user.uid,
      api_key: user.apiKey,
    });
    proxy = await startProxy({
      env: {
        PORT: String(port),
        MCP_WRITE_TOOLS: 'true',
        MCP_OAUTH_ISSUER: `${oidc.issuer},${trusted.issuer}`,
        MCP_OAUTH_AUDIENCE: resource,
        MCP_OAUTH_IDENTITIES: JSON.stringify({
          identities: [
            // Two issuers: each entry names whose tokens it maps (a group name is only unique per issuer).
            {
              name: 'sales',
              match: { claim: 'groups', value: 'sales', issuer: oidc.issuer },
              erp: connection(admin),
            },
            {
              name: 'reporting',
              match: { claim: 'groups', value: 'reporting', issuer: oidc.issuer },
              erp: connection(limited),
              policy: { access: 'read', models: ['res.partner'] },
            },
            {
              name: 'sales-second-issuer',
              match: { claim: 'groups', value: 'sales', issuer: trusted.issuer },
              erp: connection(admin),
            },
          ],
        }),
      },
    });
  });
  afterAll(async () => {
    await proxy?.close();
    await forged?.close();
    await trusted?.close();
    await oidc?.close();
  });

  /** An SDK client that signs `account` in (the test is the browser) and connects. */
  async function signedInClient(account: string): Promise<{ client: Client; connector: TestConnectorAuth }> {
    const connector = new TestConnectorAuth();
    const url = new URL(resource);
    let transport = new StreamableHTTPClientTransport(url, { authProvider: connector });
    const client = new Client({ name: 'erp-proxy-oauth-tests', version: '1.0.0' });
    await expect(client.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    const callback = await oidc.signIn(connector.authorizationUrl ?? '', account);
    await transport.finishAuth(callback.get('code') ?? '');
    transport = new StreamableHTTPClientTransport(url, { authProvider: connector });
    await client.connect(transport);
    return { client, connector };
  }

  it('serves its protected resource metadata (both forms), naming the issuer and the scopes', async () => {
    for (const path of [
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource',
    ]) {
      const answer = await proxy.get(path);
      expect(answer.status).toBe(200);
      expect(answer.json).toEqual({
        resource,
        authorization_servers: [oidc.issuer, trusted.issuer],
        scopes_supported: ['erp.read', 'erp.write'],
        bearer_methods_supported: ['header'],
        resource_name: 'erp-proxy MCP',
      });
    }
  });

  it('answers a request without a credential 401 naming the metadata, and a bad proxy key alike', async () => {
    for (const headers of [{}, { 'x-api-key': 'not-a-proxy-key-000000' }] as Record<string, string>[]) {
      const answer = await postMcp({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers);
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toBe(
        `Bearer resource_metadata="${new URL('/.well-known/oauth-protected-resource/mcp', resource).href}"`,
      );
    }
  });

  it('the SDK signs a person in and calls tools as the Odoo user the map names; x-erp-* headers are ignored', async () => {
    double.requests.length = 0;
    const { client } = await signedInClient('alice');
    try {
      const tools = (await client.listTools()).tools.map((tool) => tool.name);
      expect(tools).toContain('create');
      const rows = json(
        await client.callTool({
          name: 'search_read',
          arguments: { model: 'res.partner', fields: ['name'], limit: 2 },
        }),
      );
      expect(rows).toHaveLength(2);
      // The ERP was called with the map's connection: the admin's key on erp_a.
      const sent = double.requests.filter((request) => request.path.startsWith('/json/2/'));
      expect(sent.length).toBeGreaterThan(0);
      expect(sent.every((request) => request.headers.authorization === `bearer ${admin.apiKey}`)).toBe(true);
      expect(sent.every((request) => request.headers['x-odoo-database'] === 'erp_a')).toBe(true);
    } finally {
      await client.close();
    }
  });

  it("follows the identity's policy: a reporting person reads partners only, and sees no write tool", async () => {
    const { client } = await signedInClient('bob');
    try {
      const tools = (await client.listTools()).tools.map((tool) => tool.name);
      expect(tools).not.toContain('create');
      expect(
        json(await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } })),
      ).toEqual(expect.any(Number));
      expect(
        toolError(await client.callTool({ name: 'search_count', arguments: { model: 'res.users' } })),
      ).toMatchObject({
        source: 'proxy',
        code: -32008,
      });
    } finally {
      await client.close();
    }
  });

  it('refuses a person the map does not name: 403, ask an operator, no connection listed', async () => {
    const connector = new TestConnectorAuth();
    const { auth } = await import('@modelcontextprotocol/sdk/client/auth.js');
    expect(await auth(connector, { serverUrl: resource })).toBe('REDIRECT');
    const code = (await oidc.signIn(connector.authorizationUrl ?? '', 'mallory')).get('code') ?? '';
    expect(await auth(connector, { serverUrl: resource, authorizationCode: code })).toBe('AUTHORIZED');
    double.requests.length = 0;
    const answer = await postMcp(
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { authorization: `Bearer ${connector.tokens()?.access_token}` },
    );
    expect(answer.status).toBe(403);
    const error = (answer.json as { error: { code: number; message: string } }).error;
    expect(error.code).toBe(-32008);
    expect(error.message).toMatch(/ask an operator to map it \(your subject: mallory\)/);
    expect(error.message).not.toMatch(/sales|reporting|erp_a|127\.0\.0\.1/);
    expect(double.requests).toEqual([]);
  });

  describe('hostile tokens: refused, nothing reaches the ERP', () => {
    const now = () => Math.floor(Date.now() / 1000);
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

    async function send(token: string) {
      double.requests.length = 0;
      const answer = await postMcp(
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        { authorization: `Bearer ${token}` },
      );
      expect(double.requests).toEqual([]);
      return answer;
    }

    it.each([
      [
        'from an issuer the proxy does not trust',
        async () => forged.mint({ groups: ['sales'], scope: 'erp.read' }),
        'the token was not issued by an authorization server this resource trusts',
      ],
      [
        'alg none',
        async () =>
          `${b64({ alg: 'none' })}.${b64({ iss: oidc.issuer, aud: resource, exp: now() + 300, groups: ['sales'] })}.`,
        'tokens signed with none are not accepted',
      ],
      [
        'HMAC-signed with a public key',
        async () => {
          const header = b64({ alg: 'HS256', kid: 'oidc-test-1' });
          const payload = b64({
            iss: oidc.issuer,
            aud: resource,
            exp: now() + 300,
            groups: ['sales'],
            scope: 'erp.read erp.write',
          });
          return `${header}.${payload}.${createHmac('sha256', 'public').update(`${header}.${payload}`).digest('base64url')}`;
        },
        'tokens signed with HS256 are not accepted',
      ],
      [
        'expired',
        async () => trusted.mint({ groups: ['sales'], scope: 'erp.read', exp: now() - 3600 }),
        'the access token has expired',
      ],
      [
        'not yet valid',
        async () => trusted.mint({ groups: ['sales'], scope: 'erp.read', nbf: now() + 3600 }),
        'the access token is not valid yet',
      ],
      [
        'for another audience (no token passthrough)',
        async () =>
          trusted.mint({ groups: ['sales'], scope: 'erp.read', aud: 'https://other.example.com/mcp' }),
        'the access token was issued for another resource',
      ],
      [
        'signed by a key the issuer does not publish',
        async () => {
          await trusted.addUnpublishedKey('rogue');
          return trusted.mint({ groups: ['sales'], scope: 'erp.read' }, { kid: 'rogue' });
        },
        "the access token's signing key is not one of the authorization server's keys",
      ],
    ])('%s: 401 invalid_token', async (_, token, description) => {
      const answer = await send(await token());
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toContain(
        `error="invalid_token", error_description="${description}"`,
      );
    });
  });

  it('1,000 tokens with unknown kids in a row cost at most one JWKS fetch', async () => {
    await trusted.addUnpublishedKey('unknown-kid');
    const token = await trusted.mint({ groups: ['sales'], scope: 'erp.read' }, { kid: 'unknown-kid' });
    // The issuer's keys fetched once (a good token), then a thousand unknown kids.
    expect(
      (
        await postMcp(
          { jsonrpc: '2.0', id: 1, method: 'tools/list' },
          { authorization: `Bearer ${await trusted.mint({ groups: ['sales'], scope: 'erp.read' })}` },
        )
      ).status,
    ).not.toBe(401);
    const before = trusted.jwksFetches();
    for (let i = 0; i < 1000; i++) {
      const answer = await postMcp(
        { jsonrpc: '2.0', id: i, method: 'tools/list' },
        { authorization: `Bearer ${token}` },
      );
      expect(answer.status).toBe(401);
    }
    expect(trusted.jwksFetches() - before).toBeLessThanOrEqual(1);
  });

  it('a token granting erp.read only: reads, and a write tool is 403 insufficient_scope naming erp.write', async () => {
    const token = await trusted.mint({ groups: ['sales'], scope: 'erp.read' });
    const headers = { authorization: `Bearer ${token}` };
    const listed = await postMcp({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers);
    const names = (listed.json as { result: { tools: Array<{ name: string }> } }).result.tools.map(
      (tool) => tool.name,
    );
    expect(names).toContain('search_read');
    expect(names).not.toContain('create');
    double.requests.length = 0;
    const write = await postMcp(
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'create', arguments: { model: 'res.partner', values: { name: 'x' } } },
      },
      headers,
    );
    expect(write.status).toBe(403);
    expect(write.headers.get('www-authenticate')).toMatch(
      /error="insufficient_scope".*scope="erp.read erp.write"/,
    );
    expect(double.requests).toEqual([]);
  });

  it("a person of the second issuer is not the first issuer's person of the same group or sub", async () => {
    // "reporting" is mapped for the OpenID provider's tokens only.
    const answer = await postMcp(
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      {
        authorization: `Bearer ${await trusted.mint({ sub: 'bob', groups: ['reporting'], scope: 'erp.read' })}`,
      },
    );
    expect(answer.status).toBe(403);
    expect((answer.json as { error: { message: string } }).error.message).toMatch(
      /ask an operator to map it/,
    );
  });

  it('a token granting no erp scope at all: 403 insufficient_scope asking for erp.read', async () => {
    const answer = await postMcp(
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { authorization: `Bearer ${await trusted.mint({ groups: ['sales'], scope: 'openid email' })}` },
    );
    expect(answer.status).toBe(403);
    expect(answer.headers.get('www-authenticate')).toMatch(/error="insufficient_scope".*scope="erp.read"/);
  });

  it('proxy keys keep working on the same /mcp (x-api-key, and a bearer that is not a JWT)', async () => {
    for (const headers of [
      { 'x-api-key': TEST_PROXY_KEY },
      { authorization: `Bearer ${TEST_PROXY_KEY}` },
    ] as Record<string, string>[]) {
      const answer = await postMcp(
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-06-18',
            capabilities: {},
            clientInfo: { name: 't', version: '1' },
          },
        },
        headers,
      );
      expect(answer.status).toBe(200);
    }
  });
});

describe('POST /mcp with OAuth: an empty identity map (the stack first value), writes off', () => {
  const oauth = useOAuthProxy(() => []);

  it('refuses every signed-in person 403 as unmapped (not a 500)', async () => {
    const answer = await oauth.post(await oauth.mint({ sub: 'someone', scope: 'erp.read erp.write' }), {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
    });
    expect(answer.status).toBe(403);
    expect((answer.json as { error: { code: number; message: string } }).error).toMatchObject({
      code: -32008,
      message: expect.stringMatching(/ask an operator to map it/),
    });
  });
});

describe('POST /mcp with OAuth: an identity without user_id on ERP 16-18', () => {
  const double = useErpDouble({ mode: '18' });
  const oauth = useOAuthProxy(() => [
    {
      name: 'no-uid',
      match: { claim: 'sub', value: 'dana' },
      erp: { url: double.url, db: 'erp_a', api_key: admin.apiKey },
    },
  ]);

  it("says the operator's map entry lacks user_id (not a header the person cannot set)", async () => {
    const answer = await oauth.searchCount('dana');
    const error = toolError((answer.json as { result: unknown }).result);
    expect(error.message).toMatch(/identity map entry "no-uid" has no erp\.user_id: ask an operator/);
    expect(error.message).not.toMatch(/x-erp-user-id/);
  });
});

describe('POST /mcp with OAuth: two people of one group, one idempotency_key (issue 39)', () => {
  const double = useErpDouble({ mode: '19' });
  const oauth = useOAuthProxy(
    () => [
      {
        name: 'sales-team',
        match: { claim: 'groups', value: 'sales' },
        erp: { url: double.url, db: 'erp_a', user_id: admin.uid, api_key: admin.apiKey },
      },
    ],
    { MCP_WRITE_TOOLS: 'true' },
  );

  it('keeps a record per person (issuer and sub), not per identity-map entry', async () => {
    const creates = () =>
      double.requests.filter((request) => request.path === '/json/2/res.partner/create').length;
    const create = async (token: string, id: number) => {
      const answer = await oauth.post(
        token,
        {
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: {
            name: 'create',
            arguments: {
              model: 'res.partner',
              values: { name: 'Shared Key Co' },
              idempotency_key: 'team-key-1',
            },
          },
        },
        { 'mcp-protocol-version': '2025-11-25' },
      );
      expect(answer.status).toBe(200);
      const result = (answer.json as { result: { isError?: boolean; content: { text: string }[] } }).result;
      expect(result.isError ?? false, result.content[0]?.text).toBe(false);
      return result.content[0]?.text;
    };
    const before = creates();
    const alice = await oauth.mint({ sub: 'alice', groups: ['sales'], scope: 'erp.read erp.write' });
    const bob = await oauth.mint({ sub: 'bob', groups: ['sales'], scope: 'erp.read erp.write' });
    const aliceFirst = await create(alice, 1);
    const aliceRetry = await create(alice, 2);
    const bobFirst = await create(bob, 3);
    expect(aliceRetry).toBe(aliceFirst);
    expect(bobFirst).not.toBe(aliceFirst);
    expect(creates() - before).toBe(2);
  });
});

describe("POST /mcp with OAuth: a connection's failure is the operator's to fix, never a header", () => {
  const double = useErpDouble({ mode: '19' });
  const oauth = useOAuthProxy(() => [
    {
      name: 'bad-key',
      match: { claim: 'sub', value: 'erin' },
      erp: { url: double.url, db: 'erp_a', user_id: admin.uid, api_key: 'not-a-valid-erp-key-0000000000' },
    },
    {
      name: 'not-an-erp',
      match: { claim: 'sub', value: 'frank' },
      erp: { url: `${double.url}/not/an/erp`, db: 'erp_a', user_id: admin.uid, api_key: admin.apiKey },
    },
  ]);

  it.each([
    ['erin', 'bad-key', 401, /erp\.api_key of the operator's identity map entry "bad-key"/],
    ['frank', 'not-an-erp', undefined, /the operator's identity map entry "not-an-erp"/],
  ])(
    '%s (entry %s): the tool error names the entry, and no x-erp-* header',
    async (sub, _entry, code, words) => {
      const answer = await oauth.searchCount(sub);
      const error = toolError((answer.json as { result: unknown }).result);
      if (code !== undefined) expect(error.code).toBe(code);
      expect(`${error.message} ${error.retry}`).toMatch(words);
      expect(JSON.stringify(answer.json)).not.toMatch(/x-erp|MCP client's configuration/);
    },
  );
});

/**
 * A proxy with OAuth on for the enclosing block: a loopback token issuer it trusts, and the identity
 * map `identities()` gives (read when the block starts). Returns the issuer, and a POST /mcp with a
 * bearer token.
 */
function useOAuthProxy(identities: () => unknown[], env: Record<string, string> = {}) {
  let issuer: TokenIssuer | undefined;
  let proxy: ProxyHarness | undefined;
  let resource = '';
  beforeAll(async () => {
    // The port is chosen before the proxy listens (it is in the audience): another process may
    // take it in between, so a taken port means another one, a few times.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      resource = `http://127.0.0.1:${port}/mcp`;
      issuer = await startTokenIssuer(resource);
      try {
        proxy = await startProxy({
          env: {
            PORT: String(port),
            MCP_OAUTH_ISSUER: issuer.issuer,
            MCP_OAUTH_AUDIENCE: resource,
            MCP_OAUTH_IDENTITIES: JSON.stringify({ identities: identities() }),
            ...env,
          },
        });
        return;
      } catch (error) {
        await issuer.close();
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt === 3) throw error;
      }
    }
  });
  afterAll(async () => {
    await proxy?.close();
    await issuer?.close();
  });
  const mint = (claims: Record<string, unknown>) => {
    if (!issuer) throw new Error('the token issuer is not started yet');
    return issuer.mint(claims);
  };
  const post = async (token: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(resource, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${token}`,
        ...headers,
      },
      body: JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as unknown };
  };
  return {
    mint,
    post,
    /** `search_count` of `res.partner` (2025-11-25) with an `erp.read` token of `sub`. */
    searchCount: async (sub: string) =>
      post(
        await mint({ sub, scope: 'erp.read' }),
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'search_count', arguments: { model: 'res.partner' } },
        },
        { 'mcp-protocol-version': '2025-11-25' },
      ),
  };
}

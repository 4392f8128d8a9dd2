/**
 * `POST /mcp`'s caller check (middleware/mcp-auth.ts) and its edge (middleware/mcp-inbound.ts):
 * the credential is read once, and who calls, the key presented and the connection leave as
 * values. The token checks themselves are token-verifier.test.ts's; here the verifier is a
 * stand-in that accepts one token.
 */
import { describe, expect, it } from 'vitest';
import { buildContext } from '../../../lambdas/local/server.ts';
import { type McpAuthenticated, mcpAuth } from '../../../lambdas/middleware/mcp-auth.ts';
import { toMcpInbound } from '../../../lambdas/middleware/mcp-inbound.ts';
import { AuthenticationError } from '../../../lambdas/platform/errors.ts';
import { parseIdentities } from '../../../lambdas/protocol/oauth/identities.ts';
import type { OAuthResourceServer } from '../../../lambdas/protocol/oauth/resource-server.ts';
import { httpApiEvent } from '../../support/http-api-event.ts';

const KEY = 'proxy-key-of-the-agents-0123456789';
const keys = { getKeys: async () => [{ name: 'agents', key: KEY, policy: undefined }] };
const ISSUER = 'https://login.example.com';
const RESOURCE = 'https://erp-proxy.example.com/mcp';
/** A JWT-shaped bearer value (its header names `alg`); the stand-in verifier accepts it. */
const TOKEN = `${Buffer.from('{"alg":"ES256"}').toString('base64url')}.e30.c2ln`;
/** A token issued to a named client (`client_id`, RFC 9068): the audit records which client. */
const CLIENT_TOKEN = `${Buffer.from('{"alg":"ES256"}').toString('base64url')}.e30.Y2xpZW50`;
const identities = parseIdentities(
  JSON.stringify({
    identities: [
      {
        name: 'sales',
        match: { claim: 'sub', value: 'alice' },
        erp: { url: 'https://erp.example.com', db: 'prod', user_id: 7, api_key: 'erp-key-of-sales-0123' },
      },
    ],
  }),
);
const oauth: OAuthResourceServer = {
  verifier: {
    verify: async (token) =>
      token === TOKEN || token === CLIENT_TOKEN
        ? {
            ok: true,
            issuer: ISSUER,
            subject: 'alice',
            claims:
              token === TOKEN
                ? { iss: ISSUER, sub: 'alice' }
                : { iss: ISSUER, sub: 'alice', client_id: 'claude\u202E-desktop' },
            scopes: new Set(['erp.read']),
          }
        : { ok: false, kind: 'invalid_token', description: 'the access token is not valid' },
  },
  getIdentities: async () => identities,
  resource: RESOURCE,
  issuers: [ISSUER],
};

const event = (headers: Record<string, string>) =>
  httpApiEvent(
    { method: 'POST', path: '/mcp' },
    { headers: { 'content-type': 'application/json', ...headers } },
  );

async function authenticated(oauthOn: boolean, headers: Record<string, string>): Promise<McpAuthenticated> {
  const { values } = await mcpAuth(keys, oauthOn ? oauth : undefined).run(event(headers), {});
  return values;
}

async function refusal(oauthOn: boolean, headers: Record<string, string>): Promise<AuthenticationError> {
  const error = await authenticated(oauthOn, headers).catch((thrown: unknown) => thrown);
  expect(error).toBeInstanceOf(AuthenticationError);
  return error as AuthenticationError;
}

describe('mcpAuth: the credential read once, who calls as values', () => {
  it('a proxy key (x-api-key or bearer): its name, the key presented, no person', async () => {
    for (const headers of [{ 'x-api-key': KEY }, { authorization: `Bearer ${KEY}` }] as Record<
      string,
      string
    >[]) {
      expect(await authenticated(true, headers)).toEqual({
        callerName: 'agents',
        policy: undefined,
        callerIdentity: { kind: 'key', name: 'agents' },
        presentedProxyKey: KEY,
        oauth: undefined,
      });
    }
  });

  it("an access token (OAuth on): the identity's name, the person (issuer and subject), no key presented", async () => {
    const values = await authenticated(true, { authorization: `Bearer ${TOKEN}` });
    expect(values).toMatchObject({
      callerName: 'sales',
      callerIdentity: { kind: 'oauth', issuer: ISSUER, subject: 'alice', entry: 'sales' },
      presentedProxyKey: undefined,
    });
    // erp.read alone: the identity's policy narrowed to reading.
    expect(values.policy?.access).toBe('read');
  });

  it('a token issued to a named client: the identity names the client (printable), as the issuer signed it', async () => {
    const values = await authenticated(true, { authorization: `Bearer ${CLIENT_TOKEN}` });
    expect(values.callerIdentity).toEqual({
      kind: 'oauth',
      issuer: ISSUER,
      subject: 'alice',
      entry: 'sales',
      clientId: 'claude-desktop',
    });
  });

  it('x-api-key wins over a token; with OAuth off a JWT-shaped bearer is a key (and not this one)', async () => {
    expect(
      (await authenticated(true, { 'x-api-key': KEY, authorization: `Bearer ${TOKEN}` })).callerName,
    ).toBe('agents');
    const off = await refusal(false, { authorization: `Bearer ${TOKEN}` });
    expect(off.message).toBe(
      'Authentication failed: the Authorization: Bearer token does not match a proxy key',
    );
    expect(off.headers).toEqual({});
  });

  it('with OAuth on, a 401 names both ways in and where to sign in; with OAuth off, the key alone', async () => {
    const on = await refusal(true, {});
    expect(on.message).toMatch(/x-api-key header or as Authorization: Bearer <key>/);
    expect(on.message).toMatch(
      /or sign in with OAuth and send the access token as Authorization: Bearer <token>/,
    );
    expect(on.headers?.['WWW-Authenticate']).toMatch(/^Bearer resource_metadata="/);
    const off = await refusal(false, {});
    expect(off.message).not.toMatch(/OAuth/);
  });
});

describe('toMcpInbound: the values, never the Authorization header again', () => {
  const body = { body: { ok: false as const }, envelopeId: null };
  const context = buildContext('mcp', 'req-1');

  it("a token caller's connection is the identity's, typed; x-erp-* headers are ignored", async () => {
    const headers = { authorization: `Bearer ${TOKEN}`, 'x-erp-url': 'https://other.example.com' };
    const inbound = toMcpInbound(event(headers), context, {
      ...body,
      ...(await authenticated(true, headers)),
    });
    expect(inbound.identity).toEqual({ kind: 'oauth', issuer: ISSUER, subject: 'alice', entry: 'sales' });
    expect(inbound.presentedProxyKey).toBeUndefined();
    expect(inbound.erp).toEqual({
      from: 'identity',
      identity: 'sales',
      connection: {
        baseUrl: new URL('https://erp.example.com'),
        db: 'prod',
        apiKey: 'erp-key-of-sales-0123',
        uid: 7,
      },
    });
  });

  it("a key caller's: the x-erp-* headers as sent, and the key the step read", async () => {
    const headers = {
      authorization: `Bearer ${KEY}`,
      'x-erp-url': 'https://erp.example.com',
      'x-erp-user-id': '7',
    };
    const known = await authenticated(true, headers);
    const inbound = toMcpInbound(event(headers), context, { ...body, ...known });
    expect(inbound.identity).toEqual({ kind: 'key', name: 'agents' });
    expect(inbound.presentedProxyKey).toBe(KEY);
    expect(inbound.erp).toEqual({
      from: 'headers',
      headers: { url: 'https://erp.example.com', db: undefined, apiKey: undefined, userId: '7' },
    });
    // The key comes from the step's value, not from a second read of the header.
    const other = toMcpInbound(event({ authorization: 'Bearer something-else' }), context, {
      ...body,
      ...known,
    });
    expect(other.presentedProxyKey).toBe(KEY);
  });
});

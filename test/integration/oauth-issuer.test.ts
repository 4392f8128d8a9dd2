/**
 * The OAuth pieces of `/mcp` against a real OpenID provider on loopback (oidc-provider): the
 * MCP SDK's client discovers the authorization server from our protected resource metadata,
 * registers, signs a person in with PKCE and a resource indicator, and the access token it gets
 * passes our token checks with the person's claims; a token for another resource does not.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bearerChallenge,
  protectedResourceMetadata,
  resourceMetadataPath,
} from '../../lambdas/protocol/oauth/challenge.ts';
import { TokenVerifier } from '../../lambdas/protocol/oauth/token-verifier.ts';
import { TestConnectorAuth } from '../support/oauth-client.ts';
import { type OidcIssuer, startOidcIssuer } from '../support/oidc-issuer.ts';

/** A resource on loopback that serves only what discovery needs: its metadata and a 401. */
async function startResource(issuer: () => string): Promise<{ url: string; close(): Promise<void> }> {
  let resource = '';
  const server: Server = createServer((req, res) => {
    if (req.url === resourceMetadataPath(resource)) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(protectedResourceMetadata({ resource, issuers: [issuer()] })));
      return;
    }
    const metadataUrl = new URL(resourceMetadataPath(resource), resource).href;
    res.writeHead(401, { 'www-authenticate': bearerChallenge({ resourceMetadataUrl: metadataUrl }) }).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  resource = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  return { url: resource, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('the SDK client signs a person in at a real OpenID provider for /mcp', () => {
  let oidc: OidcIssuer;
  let resource: { url: string; close(): Promise<void> };
  beforeAll(async () => {
    oidc = await startOidcIssuer({
      accounts: { alice: { groups: ['sales'] }, bob: { groups: ['billing'] } },
    });
    resource = await startResource(() => oidc.issuer);
  });
  afterAll(async () => {
    await resource.close();
    await oidc.close();
  });

  it('authorization code with PKCE and our resource: a JWT our checks accept, with the person and groups', async () => {
    const connector = new TestConnectorAuth();
    // 1. Discovery, registration and the authorization request (the SDK "redirects the browser").
    expect(await auth(connector, { serverUrl: resource.url })).toBe('REDIRECT');
    const authorizationUrl = connector.authorizationUrl;
    expect(authorizationUrl?.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl?.searchParams.get('resource')).toBe(resource.url);
    // 2. The person signs in; the code comes back on the redirect URI.
    const callback = await oidc.signIn(authorizationUrl ?? '', 'alice');
    const code = callback.get('code');
    expect(code, callback.toString()).toBeTruthy();
    // 3. The SDK exchanges the code (with its PKCE verifier) for tokens.
    expect(await auth(connector, { serverUrl: resource.url, authorizationCode: code ?? '' })).toBe(
      'AUTHORIZED',
    );
    const token = connector.tokens()?.access_token ?? '';

    const check = await new TokenVerifier({ issuers: [oidc.issuer], audience: resource.url }).verify(token);
    expect(check).toMatchObject({ ok: true, issuer: oidc.issuer, subject: 'alice' });
    expect(check.ok && check.claims.groups).toEqual(['sales']);
    expect(check.ok && [...check.scopes].sort()).toEqual(['erp.read', 'erp.write']);

    // The same token presented to another resource is refused (no token passthrough).
    const elsewhere = await new TokenVerifier({
      issuers: [oidc.issuer],
      audience: 'https://other.example.com/mcp',
    }).verify(token);
    expect(elsewhere).toEqual({
      ok: false,
      kind: 'invalid_token',
      description: 'the access token was issued for another resource',
    });
  });
});

/**
 * The access token checks of `/mcp` (protocol/oauth/token-verifier.ts) against a loopback
 * authorization server: a good token, and every hostile token the OAuth issue lists, each refused
 * with a reason that names no token content.
 */
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { IssuerGet } from '../../lambdas/protocol/oauth/issuer-http.ts';
import {
  DISCOVERY_RETRY_MS,
  JWKS_COOLDOWN_MS,
  metadataUrls,
  scopesOf,
  TokenVerifier,
} from '../../lambdas/protocol/oauth/token-verifier.ts';
import { startTokenIssuer, type TokenIssuer } from '../support/token-issuer.ts';

const AUDIENCE = 'https://erp-proxy.example.com/mcp';
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('TokenVerifier', () => {
  let issuer: TokenIssuer;
  let verifier: TokenVerifier;
  beforeAll(async () => {
    issuer = await startTokenIssuer(AUDIENCE);
    verifier = new TokenVerifier({ issuers: [issuer.issuer], audience: AUDIENCE });
  });
  afterAll(async () => issuer.close());

  it('accepts a token of the issuer for our audience, with its subject and scopes', async () => {
    const check = await verifier.verify(await issuer.mint({ sub: 'alice', scope: 'erp.read erp.write' }));
    expect(check).toMatchObject({ ok: true, issuer: issuer.issuer, subject: 'alice' });
    expect(check.ok && [...check.scopes]).toEqual(['erp.read', 'erp.write']);
  });

  it.each([
    ['expired', { exp: Math.floor(Date.now() / 1000) - 3600 }, 'the access token has expired'],
    ['not yet valid', { nbf: Math.floor(Date.now() / 1000) + 3600 }, 'the access token is not valid yet'],
    [
      'for another audience',
      { aud: 'https://other.example.com/mcp' },
      'the access token was issued for another resource',
    ],
    [
      'from another issuer',
      { iss: 'https://evil.example.com' },
      'the token was not issued by an authorization server this resource trusts',
    ],
  ])('refuses a token %s', async (_, claims, description) => {
    const before = issuer.jwksFetches();
    const check = await verifier.verify(await issuer.mint(claims));
    expect(check).toEqual({ ok: false, kind: 'invalid_token', description });
    // Another issuer's token makes no fetch at all (no URL from a token is ever called).
    if ('iss' in claims) expect(issuer.jwksFetches()).toBe(before);
  });

  it('accepts exp and nbf within a minute of skew', async () => {
    const now = Math.floor(Date.now() / 1000);
    expect((await verifier.verify(await issuer.mint({ exp: now - 30 }))).ok).toBe(true);
    expect((await verifier.verify(await issuer.mint({ nbf: now + 30 }))).ok).toBe(true);
  });

  it('refuses alg none, before any key is looked at', async () => {
    const token = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ iss: issuer.issuer, aud: AUDIENCE, exp: 9e9 })}.`;
    expect(await verifier.verify(token)).toEqual({
      ok: false,
      kind: 'invalid_token',
      description: 'tokens signed with none are not accepted',
    });
  });

  it('refuses a token HMAC-signed with the public key (algorithm confusion)', async () => {
    const jwk = issuer.publicJwk();
    const header = b64({ alg: 'HS256', kid: jwk.kid });
    const payload = b64({ iss: issuer.issuer, aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) + 300 });
    for (const secret of [JSON.stringify(jwk), String(jwk.x)]) {
      const signature = createHmac('sha256', secret).update(`${header}.${payload}`).digest('base64url');
      expect(await verifier.verify(`${header}.${payload}.${signature}`)).toEqual({
        ok: false,
        kind: 'invalid_token',
        description: 'tokens signed with HS256 are not accepted',
      });
    }
  });

  it('refuses a signature that does not verify, and text that is not a JWT', async () => {
    const token = await issuer.mint({});
    const [header, payload] = token.split('.');
    const forged = `${header}.${b64({ ...JSON.parse(Buffer.from(payload ?? '', 'base64url').toString()), sub: 'admin' })}.${token.split('.')[2]}`;
    expect(await verifier.verify(forged)).toMatchObject({
      ok: false,
      description: "the access token's signature is not valid",
    });
    expect(await verifier.verify('not-a-token')).toMatchObject({
      ok: false,
      description: 'the access token is not a JWT',
    });
  });

  it('an unknown kid is refused; 1,000 unknown kids in a row fetch the JWKS at most once (cooldown)', async () => {
    await issuer.addUnpublishedKey('stranger');
    const token = await issuer.mint({}, { kid: 'stranger' });
    // A fresh verifier: its first use fetches the JWKS once.
    const fresh = new TokenVerifier({ issuers: [issuer.issuer], audience: AUDIENCE });
    expect((await fresh.verify(await issuer.mint({}))).ok).toBe(true);
    const before = issuer.jwksFetches();
    for (let i = 0; i < 1000; i++)
      expect(await fresh.verify(token)).toMatchObject({
        ok: false,
        description: "the access token's signing key is not one of the authorization server's keys",
      });
    expect(issuer.jwksFetches() - before).toBeLessThanOrEqual(1);
    expect(JWKS_COOLDOWN_MS).toBe(30_000);
  });

  it('a key the issuer publishes later (rotation) is found once the cooldown has passed', async () => {
    const rotating = new TokenVerifier({ issuers: [issuer.issuer], audience: AUDIENCE });
    await issuer.addUnpublishedKey('next');
    const token = await issuer.mint({}, { kid: 'next' });
    expect((await rotating.verify(await issuer.mint({}))).ok).toBe(true);
    issuer.publish('next');
    // Within the cooldown the cached JWKS (without the new key) is used: no refetch yet.
    expect((await rotating.verify(token)).ok).toBe(false);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + JWKS_COOLDOWN_MS + 1_000 });
    try {
      const before = issuer.jwksFetches();
      expect((await rotating.verify(await issuer.mint({}, { kid: 'next' }))).ok).toBe(true);
      expect(issuer.jwksFetches() - before).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('an issuer that cannot be reached is issuer_unavailable, and names no token content', async () => {
    const unreachable = new TokenVerifier({ issuers: ['http://127.0.0.1:9'], audience: AUDIENCE });
    const token = await issuer.mint({ iss: 'http://127.0.0.1:9' });
    const first = await unreachable.verify(token);
    expect(first).toMatchObject({ ok: false, kind: 'issuer_unavailable' });
    expect(JSON.stringify(first)).not.toContain(token);
  });

  it('an issuer whose metadata failed is not asked again for 30 s, then is', async () => {
    let asked = 0;
    const failing: IssuerGet = async () => {
      asked++;
      return { status: 503, body: 'down' };
    };
    const down = new TokenVerifier({ issuers: [issuer.issuer], audience: AUDIENCE, get: failing });
    const token = await issuer.mint({});
    expect(await down.verify(token)).toMatchObject({ ok: false, kind: 'issuer_unavailable' });
    const afterFirst = asked;
    expect(afterFirst).toBe(2); // RFC 8414, then OpenID discovery
    for (let i = 0; i < 20; i++) await down.verify(token);
    expect(asked).toBe(afterFirst);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + DISCOVERY_RETRY_MS + 1_000 });
    try {
      await down.verify(token);
      expect(asked).toBe(afterFirst * 2);
    } finally {
      vi.useRealTimers();
    }
  });

  it("reads the issuer's metadata and keys without loading undici (fetch): a fresh process's first token", async () => {
    // Node's fetch, Headers and Response load undici on first use: ~50 ms of a cold start's first
    // token call (BENCHMARKS.md, "OAuth on /mcp"). The child checks a token, then lists what it loaded.
    const verifierUrl = new URL('../../lambdas/protocol/oauth/token-verifier.ts', import.meta.url).href;
    const script = [
      `const { TokenVerifier } = await import(${JSON.stringify(verifierUrl)});`,
      `const verifier = new TokenVerifier({ issuers: [process.env.ISSUER], audience: ${JSON.stringify(AUDIENCE)} });`,
      'const check = await verifier.verify(process.env.TOKEN);',
      "const undici = process.moduleLoadList.filter((name) => name.includes('undici'));",
      'process.stdout.write(JSON.stringify({ ok: check.ok, undici }));',
    ].join('\n');
    const before = issuer.jwksFetches();
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      { env: { ...process.env, ISSUER: issuer.issuer, TOKEN: await issuer.mint({ sub: 'alice' }) } },
    );
    expect(JSON.parse(stdout)).toEqual({ ok: true, undici: [] });
    expect(issuer.jwksFetches() - before).toBe(1);
  });

  it('never echoes a long or odd alg header', async () => {
    const token = `${b64({ alg: 'X'.repeat(5000) })}.${b64({ iss: issuer.issuer })}.`;
    const check = await verifier.verify(token);
    expect(check).toEqual({
      ok: false,
      kind: 'invalid_token',
      description: "the token's signing algorithm is not accepted",
    });
  });
});

describe('metadataUrls', () => {
  it('lists RFC 8414 and OpenID discovery URLs in the MCP specification order', () => {
    expect(metadataUrls('https://auth.example.com')).toEqual([
      'https://auth.example.com/.well-known/oauth-authorization-server',
      'https://auth.example.com/.well-known/openid-configuration',
    ]);
    expect(metadataUrls('https://auth.example.com/tenant1/')).toEqual([
      'https://auth.example.com/.well-known/oauth-authorization-server/tenant1',
      'https://auth.example.com/.well-known/openid-configuration/tenant1',
      'https://auth.example.com/tenant1/.well-known/openid-configuration',
    ]);
  });
});

describe('scopesOf', () => {
  it('reads scope (a string) and scp (an array or a string)', () => {
    expect([...scopesOf({ scope: 'erp.read  openid' })]).toEqual(['erp.read', 'openid']);
    expect([...scopesOf({ scp: ['erp.read', 7] })]).toEqual(['erp.read']);
    expect([...scopesOf({})]).toEqual([]);
  });

  it("counts Cognito's resource-server scopes (<audience>/<scope>) as ours, and no other resource's", () => {
    const audience = 'https://erp.example.com/mcp';
    expect([
      ...scopesOf({ scope: `${audience}/erp.read https://other.example.com/erp.write openid` }, audience),
    ]).toEqual(['erp.read', 'https://other.example.com/erp.write', 'openid']);
  });
});

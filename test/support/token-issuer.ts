/**
 * A minimal authorization server for the token checks' tests: on loopback, it serves RFC 8414
 * metadata and a JWKS (counting the JWKS fetches), and mints JWT access tokens with its own
 * keys, or with whatever a hostile test asks for. The full OAuth flow (login, PKCE) is tested
 * against a real OpenID provider (test/support/oidc-issuer.ts).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';

export interface TokenIssuer {
  /** The issuer identifier (`iss`), `http://127.0.0.1:<port>`. */
  readonly issuer: string;
  /** How many times the JWKS was fetched. */
  jwksFetches(): number;
  /** How many times the metadata was fetched. */
  metadataFetches(): number;
  /** A token signed with the issuer's key `kid` (default: its first), claims over the defaults. */
  mint(
    claims: JWTPayload,
    options?: { kid?: string; alg?: string; expiresIn?: string | number },
  ): Promise<string>;
  /** A key the JWKS does not publish (yet): for unknown `kid` and rotation tests. */
  addUnpublishedKey(kid: string): Promise<void>;
  /** Publishes a key added with {@link addUnpublishedKey}. */
  publish(kid: string): void;
  /** The first published public key as a JWK (for the HMAC-with-public-key attack). */
  publicJwk(): JWK;
  close(): Promise<void>;
}

interface Key {
  readonly kid: string;
  readonly privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  readonly publicJwk: JWK;
  published: boolean;
}

export async function startTokenIssuer(audience: string): Promise<TokenIssuer> {
  const keys: Key[] = [];
  const addKey = async (kid: string, published: boolean) => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    keys.push({
      kid,
      privateKey,
      publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' },
      published,
    });
  };
  await addKey('key-1', true);
  let jwks = 0;
  let metadata = 0;
  let issuer = '';
  const server: Server = createServer((req, res) => {
    if (req.url === '/.well-known/oauth-authorization-server') {
      metadata++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks`, response_types_supported: ['code'] }));
      return;
    }
    if (req.url === '/jwks') {
      jwks++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ keys: keys.filter((key) => key.published).map((key) => key.publicJwk) }));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    issuer,
    jwksFetches: () => jwks,
    metadataFetches: () => metadata,
    async mint(claims, { kid = 'key-1', alg = 'ES256', expiresIn = '5m' } = {}) {
      const key = keys.find((candidate) => candidate.kid === kid);
      if (!key) throw new Error(`no key ${kid}`);
      const jwt = new SignJWT({ iss: issuer, aud: audience, sub: 'user-1', ...claims })
        .setProtectedHeader({ alg, kid, typ: 'at+jwt' })
        .setIssuedAt();
      if (expiresIn !== 0 && claims.exp === undefined) jwt.setExpirationTime(expiresIn);
      return jwt.sign(key.privateKey);
    },
    addUnpublishedKey: (kid) => addKey(kid, false),
    publish(kid) {
      const key = keys.find((candidate) => candidate.kid === kid);
      if (key) key.published = true;
    },
    publicJwk: () => keys[0]?.publicJwk ?? {},
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

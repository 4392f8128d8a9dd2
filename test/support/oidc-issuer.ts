/**
 * A real OpenID provider on loopback for the OAuth tests: the one `npm run oauth:try-out` runs
 * (bin/oauth-try-out.ts), `oidc-provider` (the certified Node implementation) issuing JWT access
 * tokens for a resource indicator (RFC 8707), with PKCE required, dynamic client registration open (as MCP clients use it), and its development login
 * driven by the test ({@link OidcIssuer.signIn}): the person signs in as an account of
 * `accounts`, whose claims (`groups`...) go into the access token.
 */
import { createHash, randomBytes } from 'node:crypto';
import { listenDevIssuer } from '../../bin/oauth-try-out.ts';

export interface OidcIssuer {
  /** The issuer identifier, `http://127.0.0.1:<port>`. */
  readonly issuer: string;
  /**
   * Follows an authorization URL as a person's browser would: signs in as `account`, consents,
   * and returns the redirect URI's query (`code`, `state`, or `error`).
   */
  signIn(authorizationUrl: URL | string, account: string): Promise<URLSearchParams>;
  close(): Promise<void>;
}

export interface OidcIssuerOptions {
  /** Accounts by id, with the claims their access tokens carry. */
  readonly accounts: Readonly<Record<string, Record<string, unknown>>>;
  /** Scopes the resource server offers (granted as asked). */
  readonly scopes?: readonly string[];
  /** Access token lifetime in seconds. */
  readonly accessTokenTtl?: number;
}

/** Minimal cookie jar for one browser session against the provider. */
class CookieJar {
  private readonly cookies = new Map<string, string>();
  store(response: Response): void {
    for (const header of response.headers.getSetCookie()) {
      const [pair] = header.split(';');
      const index = pair?.indexOf('=') ?? -1;
      if (pair && index > 0) this.cookies.set(pair.slice(0, index).trim(), pair.slice(index + 1));
    }
  }
  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

export async function startOidcIssuer(options: OidcIssuerOptions): Promise<OidcIssuer> {
  // The provider of `npm run oauth:try-out`, with the test's accounts.
  const { issuer, close } = await listenDevIssuer(0, {
    claimsOf: (id) => options.accounts[id],
    ...(options.scopes ? { scopes: options.scopes } : {}),
    ...(options.accessTokenTtl ? { accessTokenTtl: options.accessTokenTtl } : {}),
  });

  return {
    issuer,
    async signIn(authorizationUrl, account) {
      const jar = new CookieJar();
      let url = new URL(authorizationUrl);
      for (let hop = 0; hop < 12; hop++) {
        const response = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } });
        jar.store(response);
        const location = response.headers.get('location');
        if (response.status >= 300 && response.status < 400 && location) {
          const next = new URL(location, url);
          if (next.origin !== issuer) return next.searchParams;
          url = next;
          continue;
        }
        const page = await response.text();
        const uid = /\/interaction\/([^/"?]+)/.exec(url.pathname)?.[1];
        if (response.status !== 200 || !uid)
          throw new Error(`sign-in stopped at ${url.pathname}: HTTP ${response.status}`);
        const prompt = page.includes('name="login"') ? 'login' : 'consent';
        const submit = await fetch(new URL(`/interaction/${uid}`, issuer), {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
          body: new URLSearchParams(
            prompt === 'login' ? { prompt, login: account, password: 'any' } : { prompt },
          ),
        });
        jar.store(submit);
        const after = submit.headers.get('location');
        if (!after) throw new Error(`the ${prompt} step answered HTTP ${submit.status} without a redirect`);
        url = new URL(after, issuer);
      }
      throw new Error('sign-in did not finish in 12 steps');
    },
    close,
  };
}

/**
 * An access token for `resource`, as a connector gets one: dynamic registration, the
 * authorization code with PKCE (S256) and the resource indicator, `account` signing in
 * ({@link OidcIssuer.signIn}), then the code exchanged at the token endpoint. Plain `fetch`, no
 * client library: bin/node24-bundles.ts uses it outside the tests too.
 */
export async function accessToken(
  oidc: OidcIssuer,
  account: string,
  resource: string,
  scope = 'erp.read erp.write',
): Promise<string> {
  const redirect = 'http://127.0.0.1:1/callback';
  const metadata = (await (
    await fetch(new URL('/.well-known/openid-configuration', oidc.issuer))
  ).json()) as Record<string, string>;
  const registered = await fetch(metadata.registration_endpoint ?? '', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      redirect_uris: [redirect],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }),
  });
  const client = (await registered.json()) as { client_id?: string };
  if (client.client_id === undefined) throw new Error(`registration answered HTTP ${registered.status}`);
  const verifier = randomBytes(32).toString('base64url');
  const authorization = new URL(metadata.authorization_endpoint ?? '');
  authorization.search = new URLSearchParams({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: redirect,
    scope,
    resource,
    state: 'node',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  const code = (await oidc.signIn(authorization, account)).get('code');
  if (code === null) throw new Error('the sign-in gave no code');
  const exchanged = await fetch(metadata.token_endpoint ?? '', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirect,
      client_id: client.client_id,
      code_verifier: verifier,
      resource,
    }),
  });
  const tokens = (await exchanged.json()) as { access_token?: string };
  if (tokens.access_token === undefined)
    throw new Error(`the token endpoint answered HTTP ${exchanged.status}`);
  return tokens.access_token;
}

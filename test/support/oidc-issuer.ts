/**
 * A real OpenID provider on loopback for the OAuth tests: the one `npm run oauth:try-out` runs
 * (bin/oauth-try-out.ts), `oidc-provider` (the certified Node implementation) issuing JWT access
 * tokens for a resource indicator (RFC 8707), with PKCE required, dynamic client registration open (as MCP clients use it), and its development login
 * driven by the test ({@link OidcIssuer.signIn}): the person signs in as an account of
 * `accounts`, whose claims (`groups`...) go into the access token.
 */
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

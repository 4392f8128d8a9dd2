/**
 * @module protocol/oauth/issuer-http
 * How the token checks read an authorization server (its metadata, its keys): a `GET` of a JSON
 * document over the proxy's own HTTP client (upstream/http-client.ts), never `fetch`. Node's
 * `fetch`, `Headers` and `Response` are undici, loaded on their first use: about 50 ms of the
 * first access-token call of a cold start (BENCHMARKS.md, "OAuth on /mcp"), which jose's
 * `createRemoteJWKSet` would pay too (it builds a `Headers`). So the key set is kept here: jose's
 * local key set over the document fetched, refreshed after {@link JWKS_MAX_AGE_MS}, and refetched
 * for an unknown `kid` at most once per {@link JWKS_COOLDOWN_MS} (jose's remote key set's rules).
 *
 * The issuers are the operator's (`MCP_OAUTH_ISSUER`), never a URL from a token, so the client
 * has no target policy: an identity provider may sit on a private address.
 */
import type { JWTVerifyGetKey } from 'jose';
import { createHttpClient, type HttpClient } from '../../upstream/http-client.ts';

/** The shortest time between two JWKS fetches caused by an unknown `kid`. */
export const JWKS_COOLDOWN_MS = 30_000;
/** How long a fetched JWKS is used before it is fetched again. */
export const JWKS_MAX_AGE_MS = 10 * 60_000;
/** The largest metadata or JWKS document read (real ones are a few KB). */
export const MAX_DOCUMENT_BYTES = 512 * 1024;

/** An issuer's answer to a `GET`: the status and the body as text. */
export interface IssuerAnswer {
  readonly status: number;
  readonly body: string;
}

/** A `GET` of a JSON document from an authorization server, within `signal`'s time. */
export type IssuerGet = (url: URL, signal: AbortSignal, timeoutMs: number) => Promise<IssuerAnswer>;

/**
 * {@link IssuerGet} over an HTTP client (a new one of its own by default: the runtime's applies
 * the ERP target policy). Failures become plain errors whose message names the URL's origin and
 * why, never an ERP (the client's own messages speak of one).
 */
export function issuerGet(http: HttpClient = createHttpClient({ connectionsPerOrigin: 2 })): IssuerGet {
  return async (url, signal, timeoutMs) => {
    try {
      const response = await http.send({
        method: 'GET',
        url,
        path: `${url.pathname}${url.search}`,
        headers: { accept: 'application/json', 'user-agent': 'erp-proxy' },
        signal,
        timeoutMs,
        maxResponseBytes: MAX_DOCUMENT_BYTES,
        readOnly: true,
      });
      return { status: response.status, body: response.body.toString('utf8') };
    } catch {
      throw new Error(signal.aborted ? `no answer within ${timeoutMs} ms` : 'could not be reached');
    }
  };
}

/** What the functions have of jose: the vendored entry's exports (lib/proxy-function.ts, `VENDORED`). */
type Jose = typeof import('./vendored-jose.ts');
type LocalKeySet = ReturnType<Jose['createLocalJWKSet']>;

/**
 * An issuer's key set, as jose's `createRemoteJWKSet` keeps it (see the module header), read
 * with {@link IssuerGet}. A document that cannot be read throws a plain `Error` (the issuer is
 * unavailable); one that is no JWKS throws jose's `JWKSInvalid`.
 */
export function remoteKeySet(jose: Jose, jwksUri: URL, get: IssuerGet, timeoutMs: number): JWTVerifyGetKey {
  let local: LocalKeySet | undefined;
  let fetchedAt = Number.NEGATIVE_INFINITY;
  let pending: Promise<void> | undefined;
  const reload = (): Promise<void> => {
    pending ??= (async () => {
      try {
        const answer = await get(jwksUri, AbortSignal.timeout(timeoutMs), timeoutMs);
        if (answer.status !== 200) throw new Error(`${jwksUri.origin}: HTTP ${answer.status}`);
        let document: unknown;
        try {
          document = JSON.parse(answer.body);
        } catch {
          throw new Error(`${jwksUri.origin}: the key set is not JSON`);
        }
        local = jose.createLocalJWKSet(document as Parameters<Jose['createLocalJWKSet']>[0]);
        fetchedAt = Date.now();
      } finally {
        pending = undefined;
      }
    })();
    return pending;
  };
  return async (header, token) => {
    if (!local || Date.now() - fetchedAt >= JWKS_MAX_AGE_MS) await reload();
    try {
      return await (local as LocalKeySet)(header, token);
    } catch (error) {
      // A key published since (rotation): looked for again, at most once per cooldown.
      if (!(error instanceof jose.errors.JWKSNoMatchingKey) || Date.now() - fetchedAt < JWKS_COOLDOWN_MS)
        throw error;
      await reload();
      return (local as LocalKeySet)(header, token);
    }
  };
}

/**
 * @module protocol/oauth/token-verifier
 * Access tokens for `/mcp` as an OAuth 2.1 resource server (README, "Agents (MCP)", "Remote
 * agents with OAuth"): JWTs checked here, with `jose`, against the configured issuers' keys and
 * our audience. The token is only read here: never logged, never forwarded to an ERP.
 *
 * What a token must be, in the order it is checked (the first failure is the answer):
 * 1. a compact JWS whose header names an asymmetric algorithm of {@link ALLOWED_ALGORITHMS}
 *    (never `none`, never HMAC: an HMAC "signed" with a public key is refused before any key is
 *    looked at);
 * 2. from an issuer of the allow-list (`iss`, compared exactly). Nothing is fetched for another
 *    issuer, so a token cannot make the proxy call a URL of its choice;
 * 3. signed by a key of that issuer's JWKS (its URL from the issuer's metadata, RFC 8414 or
 *    OpenID discovery, fetched once and cached; both read with the proxy's own HTTP client,
 *    issuer-http.ts). An unknown `kid` refetches the JWKS at most once per
 *    {@link JWKS_COOLDOWN_MS} (jose's cooldown), so a stream of made-up `kid`s costs no more
 *    than one fetch per half minute;
 * 4. `aud` containing our audience (a token minted for another resource is refused: no token
 *    passthrough), `exp` in the future and `nbf` in the past, both with
 *    {@link CLOCK_TOLERANCE_SECONDS} of skew.
 */
import type { JWTPayload, JWTVerifyGetKey } from 'jose';
import {
  type IssuerAnswer,
  type IssuerGet,
  issuerGet,
  JWKS_COOLDOWN_MS,
  JWKS_MAX_AGE_MS,
  remoteKeySet,
} from './issuer-http.ts';

export { JWKS_COOLDOWN_MS, JWKS_MAX_AGE_MS };

/** What the functions have of jose: the vendored entry's exports (lib/proxy-function.ts, `VENDORED`). */
type Jose = typeof import('./vendored-jose.ts');
let joseModule: Promise<Jose> | undefined;
/**
 * `jose`, loaded on the first token: a function without OAuth, or serving proxy keys only, never
 * evaluates it (esbuild keeps a dynamically imported module's top-level code for its first use).
 */
function jose(): Promise<Jose> {
  joseModule ??= import('jose');
  return joseModule;
}

/** Asymmetric JWS algorithms accepted (RFC 7518/8037). HMAC (`HS*`) and `none` are never. */
export const ALLOWED_ALGORITHMS = Object.freeze([
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const);

/** Skew allowed on `exp`, `nbf` and `iat`. */
export const CLOCK_TOLERANCE_SECONDS = 60;
/** How long the issuer's metadata (all its well-known URLs together) and JWKS fetches may take. */
export const FETCH_TIMEOUT_MS = 5_000;
/** How long an issuer whose metadata or keys could not be read is answered unavailable at once. */
export const DISCOVERY_RETRY_MS = 30_000;

/** Why a token is not accepted: a short text for `error_description` (no token content). */
export type TokenRefusal =
  | { readonly kind: 'invalid_token'; readonly description: string }
  /** The issuer's metadata or keys could not be fetched: not the token's fault. */
  | { readonly kind: 'issuer_unavailable'; readonly description: string };

/** A token that passed every check: its claims and scopes. */
export interface VerifiedToken {
  readonly issuer: string;
  readonly subject: string | undefined;
  readonly claims: Readonly<JWTPayload>;
  /** `scope` (space-separated, RFC 8693/9068) or `scp` (an array, as Entra ID and Okta send). */
  readonly scopes: ReadonlySet<string>;
}

export type TokenCheck = ({ readonly ok: true } & VerifiedToken) | ({ readonly ok: false } & TokenRefusal);

export interface TokenVerifierOptions {
  /** Issuer identifiers, exactly as the tokens' `iss` carries them. */
  readonly issuers: readonly string[];
  /** The audience every token must carry (our resource, the public `/mcp` URL by default). */
  readonly audience: string;
  /** How metadata and keys are read (default: a client of its own, issuer-http.ts); tests replace it. */
  readonly get?: IssuerGet;
}

const refuse = (description: string): TokenCheck => ({ ok: false, kind: 'invalid_token', description });

/** The well-known metadata URLs of an issuer, in the order MCP's authorization spec gives them. */
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, '');
  const origin = url.origin;
  return path === ''
    ? [`${origin}/.well-known/oauth-authorization-server`, `${origin}/.well-known/openid-configuration`]
    : [
        `${origin}/.well-known/oauth-authorization-server${path}`,
        `${origin}/.well-known/openid-configuration${path}`,
        `${origin}${path}/.well-known/openid-configuration`,
      ];
}

/**
 * The scopes a token grants: `scope` (a string) or `scp` (an array or a string). A scope written
 * `<audience>/<scope>` counts as `<scope>`: Amazon Cognito names a resource server's custom scopes
 * so (`https://erp.example.com/mcp/erp.read`).
 */
export function scopesOf(claims: JWTPayload, audience?: string): Set<string> {
  const raw = claims.scope ?? claims.scp;
  const list = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(' ') : [];
  const prefix = audience === undefined ? undefined : `${audience.replace(/\/+$/, '')}/`;
  return new Set(
    list
      .filter((scope): scope is string => typeof scope === 'string' && scope !== '')
      .map((scope) => (prefix && scope.startsWith(prefix) ? scope.slice(prefix.length) : scope)),
  );
}

/**
 * Checks access tokens against the allowed issuers (see the module header). One instance per
 * function: it keeps each issuer's JWKS (and its refetch cooldown) between invocations.
 */
export class TokenVerifier {
  private readonly issuers: ReadonlySet<string>;
  private readonly keySets = new Map<string, Promise<JWTVerifyGetKey>>();
  /** When an issuer's discovery failed (its failed promise stays cached until {@link DISCOVERY_RETRY_MS}). */
  private readonly failedAt = new Map<string, number>();
  private getter: IssuerGet | undefined;

  constructor(private readonly options: TokenVerifierOptions) {
    this.issuers = new Set(options.issuers);
  }

  /** The `GET` of issuer documents, made on the first token (a proxy-key caller never needs one). */
  private documents(): IssuerGet {
    this.getter ??= this.options.get ?? issuerGet();
    return this.getter;
  }

  async verify(token: string): Promise<TokenCheck> {
    const { decodeJwt, decodeProtectedHeader, jwtVerify } = await jose();
    let algorithm: unknown;
    let issuer: unknown;
    try {
      algorithm = decodeProtectedHeader(token).alg;
      issuer = decodeJwt(token).iss;
    } catch {
      return refuse('the access token is not a JWT');
    }
    if (typeof algorithm !== 'string' || !(ALLOWED_ALGORITHMS as readonly string[]).includes(algorithm))
      // Named only when it is a short algorithm name: the header is the token's, not ours to echo.
      return refuse(
        typeof algorithm === 'string' && /^[A-Za-z0-9]{1,10}$/.test(algorithm)
          ? `tokens signed with ${algorithm} are not accepted`
          : "the token's signing algorithm is not accepted",
      );
    if (typeof issuer !== 'string' || !this.issuers.has(issuer))
      return refuse('the token was not issued by an authorization server this resource trusts');

    let keys: JWTVerifyGetKey;
    try {
      keys = await this.keySetOf(issuer);
    } catch (error) {
      // Remembered for a while: no new discovery per request while the issuer is unreachable.
      if (!this.failedAt.has(issuer)) this.failedAt.set(issuer, Date.now());
      return {
        ok: false,
        kind: 'issuer_unavailable',
        description: `the authorization server's keys could not be read (${error instanceof Error ? error.message : 'unknown error'})`,
      };
    }
    try {
      const { payload } = await jwtVerify(token, keys, {
        issuer,
        audience: this.options.audience,
        algorithms: [...ALLOWED_ALGORITHMS],
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['exp'],
      });
      return {
        ok: true,
        issuer,
        subject: payload.sub,
        claims: payload,
        scopes: scopesOf(payload, this.options.audience),
      };
    } catch (error) {
      return refusalOf(error, await jose());
    }
  }

  /** The issuer's JWKS, from its metadata's `jwks_uri` (fetched once per issuer). */
  private keySetOf(issuer: string): Promise<JWTVerifyGetKey> {
    const failed = this.failedAt.get(issuer);
    if (failed !== undefined && Date.now() - failed >= DISCOVERY_RETRY_MS) {
      this.keySets.delete(issuer);
      this.failedAt.delete(issuer);
    }
    let keys = this.keySets.get(issuer);
    if (!keys) {
      keys = Promise.all([this.discoverJwksUri(issuer), jose()]).then(([jwksUri, joseModule]) =>
        remoteKeySet(joseModule, jwksUri, this.documents(), FETCH_TIMEOUT_MS),
      );
      this.keySets.set(issuer, keys);
    }
    return keys;
  }

  private async discoverJwksUri(issuer: string): Promise<URL> {
    const failures: string[] = [];
    // Every metadata URL together within one timeout, not one each.
    const deadline = AbortSignal.timeout(FETCH_TIMEOUT_MS);
    for (const url of metadataUrls(issuer)) {
      if (deadline.aborted) {
        failures.push(`${url}: not tried (${FETCH_TIMEOUT_MS} ms spent)`);
        break;
      }
      let answer: IssuerAnswer;
      try {
        answer = await this.documents()(new URL(url), deadline, FETCH_TIMEOUT_MS);
      } catch (error) {
        failures.push(`${url}: ${error instanceof Error ? error.message : 'failed'}`);
        continue;
      }
      if (answer.status !== 200) {
        failures.push(`${url}: HTTP ${answer.status}`);
        continue;
      }
      let metadata: { issuer?: unknown; jwks_uri?: unknown } | undefined;
      try {
        metadata = JSON.parse(answer.body) as typeof metadata;
      } catch {
        metadata = undefined;
      }
      // RFC 8414 section 3.3: the metadata's issuer must be the one it was asked for.
      if (
        metadata?.issuer !== issuer ||
        typeof metadata.jwks_uri !== 'string' ||
        !URL.canParse(metadata.jwks_uri)
      ) {
        failures.push(`${url}: not this issuer's metadata`);
        continue;
      }
      return new URL(metadata.jwks_uri);
    }
    throw new Error(failures.join('; '));
  }
}

/** A jose verification error as the refusal a client may see (never the token's content). */
function refusalOf(error: unknown, { errors }: Jose): TokenCheck {
  if (error instanceof errors.JWTExpired) return refuse('the access token has expired');
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'nbf') return refuse('the access token is not valid yet');
    if (error.claim === 'aud') return refuse('the access token was issued for another resource');
    if (error.claim === 'iss')
      return refuse('the token was not issued by an authorization server this resource trusts');
    return refuse(`the access token's ${error.claim} claim is not valid`);
  }
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys)
    return refuse("the access token's signing key is not one of the authorization server's keys");
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return refuse("the access token's signature is not valid");
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid)
    return {
      ok: false,
      kind: 'issuer_unavailable',
      description: "the authorization server's keys could not be read",
    };
  if (error instanceof errors.JOSEError) return refuse('the access token is not valid');
  return {
    ok: false,
    kind: 'issuer_unavailable',
    description: "the authorization server's keys could not be read",
  };
}

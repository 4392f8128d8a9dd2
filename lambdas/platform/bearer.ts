/**
 * @module platform/bearer
 * The credential a request presents, read once at the edge (README, "Agents (MCP)" and "Remote
 * agents with OAuth"): `x-api-key`, or `Authorization: Bearer <value>` where a route takes it
 * (`POST /mcp`), where the value is an access token when it is a JWT and tokens are accepted
 * (OAuth on), a proxy key otherwise. Proxy keys of JWT shape are refused where the keys are read
 * (platform/config.ts), so the rule never misreads one.
 */

/** `Authorization: Bearer <token>`, the scheme in any case (RFC 9110, 11.1). */
const BEARER = /^\s*bearer\s+(\S(?:.*\S)?)\s*$/i;

/** What a request presents to prove who it is: a proxy key (and the header it came in), or an access token. */
export type Credential =
  | { readonly kind: 'key'; readonly key: string; readonly header: 'x-api-key' | 'Authorization: Bearer' }
  | { readonly kind: 'token'; readonly token: string };

/**
 * The request's credential, or `undefined` when it presents none. `x-api-key`, when sent, is the
 * one; else, with `bearer`, an `Authorization: Bearer` value: an access token when `tokens` (OAuth
 * on) and {@link isAccessToken}, a proxy key otherwise. Header names are lower-case (API Gateway's).
 */
export function presentedCredential(
  headers: Readonly<Record<string, string | undefined>>,
  options: { readonly bearer?: boolean; readonly tokens?: boolean } = {},
): Credential | undefined {
  const apiKey = headers['x-api-key'];
  if (apiKey !== undefined) return { kind: 'key', key: apiKey, header: 'x-api-key' };
  if (!options.bearer) return undefined;
  const value = BEARER.exec(headers.authorization ?? '')?.[1];
  if (value === undefined) return undefined;
  return options.tokens && isAccessToken(value)
    ? { kind: 'token', token: value }
    : { kind: 'key', key: value, header: 'Authorization: Bearer' };
}

/**
 * Whether an `Authorization: Bearer` value is an access token (a JWT: three base64url parts, the
 * first a JSON object naming `alg`) rather than a proxy key. Proxy keys are never JWT-shaped: the
 * ones the stack generates are hex, and a configured key of that shape is refused at load
 * (`parseProxyKeys`).
 */
export function isAccessToken(value: string): boolean {
  const parts = value.split('.');
  if (parts.length !== 3 || !parts.every((part, index) => index === 2 || /^[A-Za-z0-9_-]+$/.test(part)))
    return false;
  try {
    const header: unknown = JSON.parse(Buffer.from(parts[0] ?? '', 'base64url').toString('utf8'));
    return (
      typeof header === 'object' && header !== null && typeof (header as { alg?: unknown }).alg === 'string'
    );
  } catch {
    return false;
  }
}

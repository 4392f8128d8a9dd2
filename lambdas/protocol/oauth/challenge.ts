/**
 * @module protocol/oauth/challenge
 * What `/mcp` tells a client about OAuth (MCP authorization, 2025-06-18 and later; RFC 9728,
 * RFC 6750): where its protected resource metadata is, and why a credential was refused.
 */

/** The scopes `/mcp` knows: `erp.read` alone narrows a caller to reading (README, "Remote agents"). */
export const MCP_SCOPES = Object.freeze(['erp.read', 'erp.write'] as const);
export type McpScope = (typeof MCP_SCOPES)[number];

/**
 * The path of the protected resource metadata of the resource at `resource` (RFC 9728 section
 * 3.1: the well-known segment goes between the host and the resource's path):
 * `https://host/mcp` -> `/.well-known/oauth-protected-resource/mcp`.
 */
export function resourceMetadataPath(resource: string): string {
  const path = new URL(resource).pathname.replace(/\/+$/, '');
  return `/.well-known/oauth-protected-resource${path}`;
}

/** RFC 9728's document for our resource: the issuers that may sign its tokens, and its scopes. */
export function protectedResourceMetadata(options: {
  readonly resource: string;
  readonly issuers: readonly string[];
}): Record<string, unknown> {
  return {
    resource: options.resource,
    authorization_servers: [...options.issuers],
    scopes_supported: [...MCP_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'erp-proxy MCP',
  };
}

/** RFC 6750's quoted-string: a `"` or `\` escaped, control characters and non-ASCII dropped. */
function quoted(value: string): string {
  return `"${value.replace(/[^\x20-\x7e]/g, '').replace(/["\\]/g, (character) => `\\${character}`)}"`;
}

/**
 * The `WWW-Authenticate` value of a 401 or 403 on `/mcp`: always the resource metadata's URL;
 * with `error` (`invalid_token`, `insufficient_scope`) and its description when a credential was
 * refused, and the scopes that would do.
 */
export function bearerChallenge(options: {
  readonly resourceMetadataUrl: string;
  readonly error?: 'invalid_token' | 'insufficient_scope';
  readonly description?: string;
  readonly scope?: readonly string[];
}): string {
  const parts = [`resource_metadata=${quoted(options.resourceMetadataUrl)}`];
  if (options.error) parts.push(`error=${quoted(options.error)}`);
  if (options.error && options.description !== undefined)
    parts.push(`error_description=${quoted(options.description)}`);
  if (options.scope && options.scope.length > 0) parts.push(`scope=${quoted(options.scope.join(' '))}`);
  return `Bearer ${parts.join(', ')}`;
}

/**
 * Whether an `Authorization: Bearer` value is an access token (a JWT: three base64url parts, the
 * first a JSON object naming `alg`) rather than a proxy key. Proxy keys are never JWT-shaped: the
 * ones the stack generates are hex, and a configured key of that shape is refused at load
 * (README, "Remote agents with OAuth", "Proxy keys and tokens on one endpoint").
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

/** The answer of `GET` on a protected resource metadata route: the document, or 404 while OAuth is off. */
export function protectedResourceAnswer(
  oauth: { readonly resource: string; readonly issuers: readonly string[] } | undefined,
): { readonly statusCode: number; readonly headers: Record<string, string>; readonly body: string } {
  if (!oauth)
    return {
      statusCode: 404,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'Not Found' }),
    };
  return {
    statusCode: 200,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'max-age=300' },
    body: JSON.stringify(protectedResourceMetadata(oauth)),
  };
}

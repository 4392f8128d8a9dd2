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

/**
 * @module protocol/oauth/resource-server
 * `POST /mcp` as an OAuth 2.1 resource server (README, "Remote agents with OAuth"): who a caller
 * with an access token is, as plain values for the core. A token that passes the checks
 * (token-verifier.ts) is mapped to an ERP connection and a key policy by the operator's identity
 * map (identities.ts); its scopes may narrow the policy further (`erp.read` alone: read access).
 *
 * The answers a client gets, per the MCP authorization specification (2025-06-18 and later):
 * - no usable credential, or a token that does not pass: 401 with `WWW-Authenticate: Bearer
 *   resource_metadata="..."` (and `error="invalid_token"` with a description for a token);
 * - a token without `erp.read` or `erp.write`, or a write tool called without `erp.write`: 403
 *   with `error="insufficient_scope"` and the scopes that would do;
 * - a good token whose person the map does not name: 403 -32008 telling them to ask an operator
 *   (never a list of the connections there are);
 * - the authorization server's keys cannot be read: 503 -32004 (retry later).
 */

import { printable } from '../../platform/bounded-text.ts';
import type { Config } from '../../platform/config.ts';
import {
  AuthenticationError,
  IdentityRefusedError,
  UpstreamUnavailableError,
} from '../../platform/errors.ts';
import type { KeyPolicy } from '../../platform/key-policy.ts';
import { secretDocument } from '../../platform/secrets.ts';
import { bearerChallenge, type McpScope, resourceMetadataPath } from './challenge.ts';
import { type Identity, matchIdentity, parseIdentities } from './identities.ts';
import { TokenVerifier } from './token-verifier.ts';

/** What the proxy needs to serve token callers: the checks, the identity map and our resource. */
export interface OAuthResourceServer {
  readonly verifier: Pick<TokenVerifier, 'verify'>;
  /** The identity map as it stands now (a rotation of its secret shows up within the cache age). */
  getIdentities(): Promise<readonly Identity[]>;
  /** Our resource identifier: the public `/mcp` URL, the audience tokens must carry. */
  readonly resource: string;
  /** The issuers whose tokens are accepted (named by the protected resource metadata). */
  readonly issuers: readonly string[];
}

/** A caller who signed in: the map's entry, the token's issuer, subject and scopes. */
export interface OAuthCaller {
  readonly identity: Identity;
  readonly issuer: string;
  readonly subject: string | undefined;
  readonly scopes: ReadonlySet<string>;
  /** The client the token was issued to (`client_id`, RFC 9068; or `azp`), as the issuer signed it. */
  readonly clientId?: string;
}

/** The client a token names: `client_id` (RFC 9068), else `azp` (OpenID Connect), printable and bounded. */
function clientIdOf(claims: Readonly<Record<string, unknown>>): string | undefined {
  const value = typeof claims.client_id === 'string' ? claims.client_id : claims.azp;
  return typeof value === 'string' ? printable(value, 200) : undefined;
}

/** The URL of our protected resource metadata (RFC 9728), named in every challenge. */
export function resourceMetadataUrl(resource: string): string {
  return new URL(resourceMetadataPath(resource), resource).href;
}

/** The `WWW-Authenticate` header of a 401 or 403 of this resource. */
export function challengeHeaders(
  resource: string,
  refusal: Omit<Parameters<typeof bearerChallenge>[0], 'resourceMetadataUrl'> = {},
): Record<string, string> {
  return {
    'WWW-Authenticate': bearerChallenge({ resourceMetadataUrl: resourceMetadataUrl(resource), ...refusal }),
  };
}

/** A 403 asking for more scopes (the client may step up: MCP authorization, "Scope challenge"). */
export function insufficientScope(
  resource: string,
  needed: readonly McpScope[],
  why: string,
): IdentityRefusedError {
  return new IdentityRefusedError(`Refused: ${why}. Sign in again granting ${needed.join(' and ')}.`, {
    headers: challengeHeaders(resource, { error: 'insufficient_scope', description: why, scope: needed }),
  });
}

/**
 * The caller of an access token, with the policy the call is checked against: the identity's own,
 * narrowed to reading when the token does not grant `erp.write`. Throws the refusals of the module
 * header.
 */
export async function authenticateToken(
  server: OAuthResourceServer,
  token: string,
): Promise<{ readonly caller: OAuthCaller; readonly policy: KeyPolicy | undefined }> {
  const check = await server.verifier.verify(token);
  if (!check.ok) {
    if (check.kind === 'issuer_unavailable')
      throw new UpstreamUnavailableError(
        `The access token could not be checked: ${check.description}. Nothing was called; retry later.`,
      );
    throw new AuthenticationError(`Authentication failed: ${check.description}. Sign in again.`, {
      headers: challengeHeaders(server.resource, { error: 'invalid_token', description: check.description }),
    });
  }
  if (!check.scopes.has('erp.read') && !check.scopes.has('erp.write'))
    throw insufficientScope(
      server.resource,
      ['erp.read'],
      'the access token grants neither erp.read nor erp.write',
    );
  const identity = matchIdentity(await server.getIdentities(), check.claims);
  if (!identity)
    throw new IdentityRefusedError(
      'You are signed in, but this proxy has no ERP connection for your account: ask an operator to map it' +
        (check.subject ? ` (your subject: ${check.subject.slice(0, 128)}).` : '.'),
    );
  const policy: KeyPolicy | undefined = check.scopes.has('erp.write')
    ? identity.policy
    : narrowedToRead(identity.policy);
  const clientId = clientIdOf(check.claims);
  return {
    caller: {
      identity,
      issuer: check.issuer,
      subject: check.subject,
      scopes: check.scopes,
      ...(clientId === undefined ? {} : { clientId }),
    },
    policy,
  };
}

/** `policy` with read access only (a policy that allows everything otherwise, if absent). */
function narrowedToRead(policy: KeyPolicy | undefined): KeyPolicy {
  return Object.freeze({
    apis: policy?.apis,
    access: 'read',
    models: policy?.models,
    targets: policy?.targets,
    databases: policy?.databases,
    limits: policy?.limits,
    // A policy that only reads has nothing for a person to confirm.
    confirm: undefined,
    methods: policy?.methods,
    fields: policy?.fields,
    companies: policy?.companies,
  });
}

/**
 * The resource server of a configuration, or `undefined` when OAuth is off (`MCP_OAUTH_ISSUER`
 * unset). The identity map comes from its secret (`MCP_OAUTH_IDENTITIES_SECRET_ID`, through the
 * same cache as the proxy keys) or, locally, from `MCP_OAUTH_IDENTITIES`; with neither, every
 * token caller is refused as unmapped.
 */
export function createOAuthResourceServer(
  config: Pick<
    Config,
    | 'mcpOauthIssuers'
    | 'mcpOauthAudience'
    | 'mcpOauthIdentities'
    | 'mcpOauthIdentitiesSecretId'
    | 'secretsMaxAgeSeconds'
    | 'secretsExtensionPort'
    | 'awsSessionToken'
  > & { readonly localMcpUrl?: string },
  options: { readonly fetch?: typeof fetch } = {},
): OAuthResourceServer | undefined {
  const issuers = config.mcpOauthIssuers;
  if (issuers.length === 0) return undefined;
  const resource = config.mcpOauthAudience ?? config.localMcpUrl;
  if (resource === undefined)
    throw new Error('MCP_OAUTH_AUDIENCE: required with MCP_OAUTH_ISSUER (the public URL of POST /mcp)');
  const verifier = new TokenVerifier({
    issuers,
    audience: resource,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const secretId = config.mcpOauthIdentitiesSecretId;
  if (secretId !== undefined) {
    const document = secretDocument(config, secretId, 'OAuth identities', (text) =>
      parseIdentities(text, { issuers }),
    );
    return { verifier, resource, issuers, getIdentities: () => document.read() };
  }
  const local =
    config.mcpOauthIdentities === undefined ? [] : parseIdentities(config.mcpOauthIdentities, { issuers });
  return { verifier, resource, issuers, getIdentities: async () => local };
}

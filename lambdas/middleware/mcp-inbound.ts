/**
 * @module middleware/mcp-inbound
 * The edge of `POST /mcp`: the only place its API Gateway event is read for the core. It takes
 * the headers of the MCP protocol (for protocol/mcp/, which sees no other: no key ever reaches it), the ERP connection headers, the
 * caller's proxy key (an ERP key equal to it is refused), the time-budget inputs and the body
 * `jsonBody` read, and hands the core an {@link McpInbound}.
 */
import type { McpInbound } from '../core/mcp/connection.ts';
import type { ProxyContext } from '../core/request-facts.ts';
import type { KeyPolicy } from '../platform/key-policy.ts';
import { PROTOCOL_HEADERS } from '../protocol/mcp/serve.ts';
import type { OAuthCaller } from '../protocol/oauth/resource-server.ts';
import { presentedProxyKey } from './api-key-auth.ts';
import { toInboundCall } from './inbound-edge.ts';
import type { BodyRead } from './json-body.ts';
import type { ProxyEvent } from './types.ts';

/** Builds the core's view of one `POST /mcp`. API Gateway (and the local server) lower-case header names. */
export function toMcpInbound(
  event: ProxyEvent,
  context: ProxyContext,
  known: BodyRead & {
    readonly caller: string;
    readonly policy: KeyPolicy | undefined;
    readonly oauth?: OAuthCaller | undefined;
  },
): McpInbound {
  const headers = event.headers ?? {};
  const protocolHeaders: Record<string, string> = {};
  for (const name of PROTOCOL_HEADERS) {
    const value = headers[name];
    if (value !== undefined) protocolHeaders[name] = value;
  }
  return {
    ...toInboundCall(event, context, known),
    // A tool's answer is cut to a few dozen KB whatever the ERP sends, so a compressed response
    // does not earn the larger read an execute call gets (core/forward.ts); the response itself is
    // still compressed when the client accepts it (the envelope middleware).
    responseEncoding: undefined,
    // A token caller presented no proxy key, and its bearer value is no ERP key to compare.
    presentedProxyKey: known.oauth ? undefined : presentedProxyKey(event, { bearer: true })?.key,
    protocolHeaders,
    identity: known.oauth?.identity.name,
    callerScope: callerScope(known),
    // A token caller's ERP connection is the identity map's; x-erp-* headers are ignored then.
    erp: known.oauth
      ? identityConnection(known.oauth)
      : {
          url: headers['x-erp-url'],
          db: headers['x-erp-db'],
          apiKey: headers['x-erp-api-key'],
          userId: headers['x-erp-user-id'],
        },
  };
}

/**
 * Whose an idempotency key is: the proxy key's name, or the signed-in person (issuer and subject;
 * a token without `sub` falls back to its identity-map entry).
 */
function callerScope(known: { readonly caller: string; readonly oauth?: OAuthCaller | undefined }): string {
  if (known.oauth === undefined) return `key:${known.caller}`;
  return known.oauth.subject === undefined
    ? `oauth-identity:${known.oauth.issuer} ${known.oauth.identity.name}`
    : `oauth:${known.oauth.issuer} ${known.oauth.subject}`;
}

/** The ERP connection of a signed-in person, in the form the connection headers take. */
function identityConnection({ identity: { erp } }: OAuthCaller): McpInbound['erp'] {
  return {
    url: erp.url,
    db: erp.db,
    apiKey: erp.apiKey,
    userId: erp.userId === undefined ? undefined : String(erp.userId),
  };
}

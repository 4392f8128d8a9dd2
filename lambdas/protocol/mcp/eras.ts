/**
 * @module protocol/mcp/eras
 * The MCP revisions `POST /mcp` serves, and which era a request belongs to (the 2026-07-28
 * specification, basic/versioning, "Backward Compatibility with Initialization-Based Versions"):
 *
 * - **modern** (2026-07-28): no handshake; every request names its version in
 *   `params._meta["io.modelcontextprotocol/protocolVersion"]` and in the `MCP-Protocol-Version`
 *   header, and is served on its own (protocol/mcp/modern.ts);
 * - **legacy** (2025-11-25, 2025-06-18, 2025-03-26): an `initialize` opens, later requests carry
 *   the negotiated version in the header only (protocol/mcp/legacy.ts).
 *
 * A request belongs to the era of the version it names, `_meta`'s first, else the header's; an
 * `initialize` is always legacy; a request naming no version at all is legacy (a client of
 * 2025-03-26, which had no header, as the transport page allows), except `server/discover`,
 * which only the modern era has. A version this server does not serve goes to the modern era,
 * which answers it with `UnsupportedProtocolVersionError` listing the versions it serves.
 */
import { isJsonObject } from '../../platform/json.ts';
import type { JsonRpcMessage } from './messages.ts';

/** The stateless revisions, newest first. */
export const MODERN_VERSIONS = Object.freeze(['2026-07-28'] as const);
/** The revisions that open with `initialize`, newest first. */
export const LEGACY_VERSIONS = Object.freeze(['2025-11-25', '2025-06-18', '2025-03-26'] as const);
/** Every revision served, newest first: `server/discover`'s `supportedVersions`, -32022's `supported`. */
export const SUPPORTED_VERSIONS: readonly string[] = Object.freeze([...MODERN_VERSIONS, ...LEGACY_VERSIONS]);

/** The `_meta` keys of the 2026-07-28 revision (basic/index, "_meta"). */
export const META_KEYS = Object.freeze({
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
});

export type Era = 'modern' | 'legacy';

/** The version a request's `_meta` names, if it has that member (of any type). */
export function metaVersion(message: JsonRpcMessage): { readonly value: unknown } | undefined {
  if (message.kind !== 'request') return undefined;
  const meta = message.params._meta;
  return isJsonObject(meta) && META_KEYS.protocolVersion in meta
    ? { value: meta[META_KEYS.protocolVersion] }
    : undefined;
}

/** The era a message is served in; `headerVersion` is its `MCP-Protocol-Version` header. */
export function eraOf(message: JsonRpcMessage, headerVersion: string | undefined): Era {
  if (message.kind !== 'request') {
    // Notifications and responses are answered 202 in either era; a version only the modern era
    // can answer (one not served) is refused there.
    return headerVersion === undefined || isLegacy(headerVersion) ? 'legacy' : 'modern';
  }
  if (message.method === 'initialize') return 'legacy';
  const fromMeta = metaVersion(message);
  const named = fromMeta !== undefined ? fromMeta.value : headerVersion;
  if (named === undefined) return message.method === 'server/discover' ? 'modern' : 'legacy';
  return typeof named === 'string' && isLegacy(named) ? 'legacy' : 'modern';
}

function isLegacy(version: string): boolean {
  return (LEGACY_VERSIONS as readonly string[]).includes(version);
}

/**
 * @module core/mcp/key-scope
 * From Odoo 19.4 an API key has a scope, `rpc` or `MCP`, and one does not work on the other's
 * routes (odoo/odoo#268589). The proxy reaches the ERP over its RPC routes (JSON-2, `/jsonrpc`),
 * so the ERP key of an MCP connection must be an `rpc` key: an `MCP` key made for the proxy's
 * `/mcp` is refused like a wrong one. The retry advice of an ERP 401 says so on those versions
 * (README, "Agents (MCP)").
 */
import type { ErpVersion } from '../../upstream/erp-answer.ts';
import { majorVersion } from '../../upstream/version-client.ts';

/** Whether keys have scopes on this ERP: 19.4 and later, `saas~19.4` included. */
export function keysHaveScopes(version: ErpVersion | undefined): boolean {
  if (version === undefined) return false;
  const major = majorVersion(version);
  if (major === undefined) return false;
  const minor = version.version_info[1];
  return major > 19 || (major === 19 && typeof minor === 'number' && minor >= 4);
}

/** The advice of an ERP 401 where keys have scopes: a wrong or expired key, or one of the `MCP` scope. */
export const SCOPED_KEY_401_ADVICE =
  'The ERP refused the API key of this connection: it is invalid, expired or revoked, or it is an API key of the ' +
  'MCP scope. This ERP (19.4 or later) gives keys a scope, and the proxy reaches it over its RPC routes, which take ' +
  'only keys of the rpc scope. Retrying cannot help, and the model cannot change this: tell the user that the ' +
  "x-erp-api-key header of the MCP client's configuration needs a valid ERP API key of scope rpc (not MCP).";

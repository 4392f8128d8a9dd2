/**
 * @module core/mcp/server-info
 * What this MCP server says of itself, in every protocol revision: its identity (`serverInfo`)
 * and the instructions a client passes to the model (README, "Agents (MCP)").
 */
import { SERVICE_NAME } from '../../platform/names.ts';
import { PROXY_DESCRIPTION, PROXY_VERSION } from '../../platform/package-info.ts';
import { MAX_RESULT_WORDS } from './answers.ts';

/** The server's identity: `initialize`'s `serverInfo`, the `io.modelcontextprotocol/serverInfo` of 2026-07-28 results. */
export const SERVER_INFO = Object.freeze({
  name: SERVICE_NAME,
  title: 'erp-proxy (Odoo ERP)',
  version: PROXY_VERSION,
  description: PROXY_DESCRIPTION,
});

/** What the server tells the agent about its tools (`initialize`, `server/discover`). */
export const MCP_INSTRUCTIONS =
  "Tools for one Odoo ERP, reached through erp-proxy with the connection set in this MCP client's configuration; " +
  "the ERP user's access rights apply. Learn names with list_models and fields_get; search_read takes an Odoo " +
  'domain such as [["is_company", "=", true]] and the fields you need. Results are JSON text of at most ' +
  `${MAX_RESULT_WORDS}; a second text says how to get the rest when there is more. ` +
  'A failed call is a result with isError: true whose JSON gives the code, the message, the ERP exception name ' +
  'and whether retrying is safe.';

/**
 * @module core/mcp/connection
 * What `POST /mcp` knows of a request, and the ERP it reaches: the connection comes from headers
 * an MCP client's configuration sets (`x-erp-url`, `x-erp-db`, `x-erp-api-key`, and
 * `x-erp-user-id` for ERP 16-18), never from tool arguments, so a model never sees or handles an
 * ERP key (README, "Agents (MCP)"). Missing or invalid headers are a tool error (-32600) that
 * names the header, so the agent can tell its user what to fix.
 */
import { InvalidRequestError } from '../../platform/errors.ts';
import { isSameProxyKey } from '../../platform/secrets.ts';
import { HEADER_SAFE, MAX_HEADER_VALUE_LENGTH } from '../../upstream/erp-transport.ts';
import type { InboundBody, InboundCall } from '../inbound-call.ts';
import { baseUrl } from '../schemas.ts';

/** The ERP connection headers as the MCP client sent them (lower-case names, as API Gateway gives them). */
export interface ErpHeaders {
  readonly url: string | undefined;
  readonly db: string | undefined;
  readonly apiKey: string | undefined;
  readonly userId: string | undefined;
}

/** The headers of a connection, by their names. */
export const ERP_HEADER_NAMES = Object.freeze({
  url: 'x-erp-url',
  db: 'x-erp-db',
  apiKey: 'x-erp-api-key',
  userId: 'x-erp-user-id',
} as const);

/** What one `POST /mcp` request gives the core. */
export interface McpInbound extends InboundCall {
  /** The headers of the MCP protocol (protocol/mcp/serve.ts's `PROTOCOL_HEADERS`), lower-case names. */
  readonly protocolHeaders: Readonly<Record<string, string>>;
  readonly erp: ErpHeaders;
  /**
   * For a caller signed in with OAuth, the name of the identity-map entry the connection comes
   * from (README, "Remote agents with OAuth"): what is missing is then the operator's to add, not
   * a header of the MCP client's configuration.
   */
  readonly identity?: string | undefined;
  readonly body: InboundBody;
  /**
   * Whose `idempotency_key` a tool call's is (README, "Retrying writes safely"): `key:<name>` for a
   * proxy key, `oauth:<issuer> <subject>` for a signed-in person (not the identity-map entry, which
   * is often a whole group).
   */
  readonly callerScope: string;
}

/** A checked ERP connection. */
export interface ErpConnection {
  readonly baseUrl: URL;
  readonly db: string;
  readonly apiKey: string;
  /** The key's user: needed for ERP 16-18 (`/jsonrpc` execute_kw), not for JSON-2. */
  readonly uid: number | undefined;
}

const CONFIGURE =
  "Add it to the MCP client's configuration (the headers of this server's entry): the tools never take ERP credentials as arguments.";

function invalid(message: string): InvalidRequestError {
  return new InvalidRequestError(`${message} ${CONFIGURE}`);
}

/** A header value that can travel upstream as a header (`X-Odoo-Database`, `Authorization`). */
function headerValue(value: string, name: string, what: string): string {
  const trimmed = value.trim();
  if (trimmed.length > MAX_HEADER_VALUE_LENGTH) {
    throw invalid(`The ${name} header is longer than ${MAX_HEADER_VALUE_LENGTH} characters.`);
  }
  if (!HEADER_SAFE.test(trimmed)) throw invalid(`The ${name} header must hold ${what}.`);
  return trimmed;
}

/**
 * The URL of a connection (enough for `erp_version`), or the tool error naming what is missing.
 */
export function erpUrl(headers: ErpHeaders): URL {
  if (headers.url === undefined || headers.url.trim() === '') {
    const missing = (['url', 'db', 'apiKey'] as const)
      .filter((key) => headers[key] === undefined || headers[key]?.trim() === '')
      .map((key) => ERP_HEADER_NAMES[key]);
    throw new InvalidRequestError(
      `This MCP connection names no ERP: the ${missing.join(', ')} header${missing.length > 1 ? 's are' : ' is'} missing. ` +
        `Set x-erp-url, x-erp-db and x-erp-api-key (and x-erp-user-id for ERP 16-18) in the MCP client's configuration; ` +
        'the tools never take ERP credentials as arguments.',
    );
  }
  const parsed = baseUrl().safeParse(headers.url.trim());
  if (!parsed.success) {
    throw invalid(
      `The x-erp-url header ${parsed.error.issues[0]?.message ?? 'must be a URL'}: the ERP's base URL.`,
    );
  }
  return parsed.data;
}

/**
 * The whole connection of a request, checked: every header an ERP call needs. `presentedProxyKey`
 * is the key the caller authenticated with: an ERP key equal to it is refused, never sent.
 */
export function erpConnection(headers: ErpHeaders, presentedProxyKey: string | undefined): ErpConnection {
  const url = erpUrl(headers);
  const missing = (['db', 'apiKey'] as const).filter(
    (key) => headers[key] === undefined || headers[key]?.trim() === '',
  );
  if (missing.length > 0) {
    throw invalid(
      `The ${missing.map((key) => ERP_HEADER_NAMES[key]).join(' and ')} header${missing.length > 1 ? 's are' : ' is'} missing.`,
    );
  }
  const db = headerValue(headers.db as string, 'x-erp-db', 'the database name (printable ASCII)');
  // Never echoed: it is a key.
  const apiKey = headerValue(
    headers.apiKey as string,
    'x-erp-api-key',
    "the ERP user's API key (printable ASCII)",
  );
  if (presentedProxyKey !== undefined && isSameProxyKey(apiKey, presentedProxyKey)) {
    throw invalid(
      "The x-erp-api-key header holds the proxy key; it must be the ERP user's own API key (the proxy key is never sent to an ERP).",
    );
  }
  let uid: number | undefined;
  if (headers.userId !== undefined && headers.userId.trim() !== '') {
    const text = headers.userId.trim();
    uid = /^\d{1,15}$/.test(text) ? Number(text) : undefined;
    if (uid === undefined || uid < 1) {
      throw invalid("The x-erp-user-id header must be the ERP user's id, a positive integer.");
    }
  }
  return { baseUrl: url, db, apiKey, uid };
}

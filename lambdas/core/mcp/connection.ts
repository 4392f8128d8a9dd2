/**
 * @module core/mcp/connection
 * What `POST /mcp` knows of a request, and the ERP it reaches, never from tool arguments, so a
 * model never sees or handles an ERP key (README, "Agents (MCP)"):
 * - a proxy-key caller's connection comes from headers an MCP client's configuration sets
 *   (`x-erp-url`, `x-erp-db`, `x-erp-api-key`, and `x-erp-user-id` for ERP 16-18). Missing or
 *   invalid headers are a tool error (-32600) that names the header, so the agent can tell its
 *   user what to fix;
 * - a caller signed in with OAuth gets the operator's identity-map entry's connection, a typed
 *   value checked when the map was read, with the same rules (`erp_instance.url`'s `baseUrl`,
 *   {@link headerValueRules}): nothing of it is checked, or named as a header, per call.
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

/** A checked ERP connection. */
export interface ErpConnection {
  readonly baseUrl: URL;
  readonly db: string;
  readonly apiKey: string;
  /** The key's user: needed for ERP 16-18 (`/jsonrpc` execute_kw), not for JSON-2. */
  readonly uid: number | undefined;
}

/**
 * Where a request's ERP connection comes from: the MCP client's `x-erp-*` headers (a proxy-key
 * caller), or the identity-map entry named `identity` (a caller signed in with OAuth; README,
 * "Remote agents with OAuth"): what is missing is then the operator's to add, not a header.
 */
export type McpErp =
  | { readonly from: 'headers'; readonly headers: ErpHeaders }
  | { readonly from: 'identity'; readonly identity: string; readonly connection: ErpConnection };

/** What one `POST /mcp` request gives the core. */
export interface McpInbound extends InboundCall {
  /** The headers of the MCP protocol (protocol/mcp/serve.ts's `PROTOCOL_HEADERS`), lower-case names. */
  readonly protocolHeaders: Readonly<Record<string, string>>;
  readonly erp: McpErp;
  readonly body: InboundBody;
}

/**
 * The rules of a database name and an ERP key, which travel upstream as header values
 * (`X-Odoo-Database`, `Authorization`): at most {@link MAX_HEADER_VALUE_LENGTH} characters of
 * printable ASCII. The `x-erp-*` headers and the identity map are checked with them.
 */
export const headerValueRules = Object.freeze({ maxLength: MAX_HEADER_VALUE_LENGTH, pattern: HEADER_SAFE });

/** A copy of the identity's base URL: the map's own value is shared by every call. */
function identityConnection(connection: ErpConnection): ErpConnection {
  return { ...connection, baseUrl: new URL(connection.baseUrl.href) };
}

const CONFIGURE =
  "Add it to the MCP client's configuration (the headers of this server's entry): the tools never take ERP credentials as arguments.";

function invalid(message: string): InvalidRequestError {
  return new InvalidRequestError(`${message} ${CONFIGURE}`);
}

/** A header value that can travel upstream as a header (`X-Odoo-Database`, `Authorization`). */
function headerValue(value: string, name: string, what: string): string {
  const trimmed = value.trim();
  if (trimmed.length > headerValueRules.maxLength) {
    throw invalid(`The ${name} header is longer than ${headerValueRules.maxLength} characters.`);
  }
  if (!headerValueRules.pattern.test(trimmed)) throw invalid(`The ${name} header must hold ${what}.`);
  return trimmed;
}

/**
 * The URL of a connection (enough for `erp_version`), or the tool error naming what is missing.
 */
export function erpUrl(erp: McpErp): URL {
  return erp.from === 'identity' ? identityConnection(erp.connection).baseUrl : headersUrl(erp.headers);
}

/** The database of a connection, when it names one (`erp_version` sends it when given). */
export function erpDatabase(erp: McpErp): string | undefined {
  return erp.from === 'identity' ? erp.connection.db : erp.headers.db?.trim() || undefined;
}

function headersUrl(headers: ErpHeaders): URL {
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
 * The whole connection of a request, checked: every header an ERP call needs, or the identity's.
 * `presentedProxyKey` is the key the caller authenticated with: an ERP key equal to it is refused,
 * never sent.
 */
export function erpConnection(erp: McpErp, presentedProxyKey: string | undefined): ErpConnection {
  if (erp.from === 'identity') return identityConnection(erp.connection);
  const { headers } = erp;
  const url = headersUrl(headers);
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

/** The identity-map field of each connection header. */
const IDENTITY_FIELDS: Readonly<Record<string, string>> = Object.freeze({
  'x-erp-url': 'erp.url',
  'x-erp-db': 'erp.db',
  'x-erp-api-key': 'erp.api_key',
  'x-erp-user-id': 'erp.user_id',
});

/**
 * A tool failure's text in the words of the request's connection. For a caller signed in with
 * OAuth, every `x-erp-*` header (a person never set one) becomes the field of the operator's
 * identity-map entry, and what "the MCP client's configuration" would fix becomes the operator's
 * to fix; for a proxy-key caller, the text as it is.
 */
export function inConnectionWords(text: string, erp: McpErp): string {
  if (erp.from === 'headers') return text;
  const entry = `the operator's identity map entry ${JSON.stringify(erp.identity)}`;
  const field = (header: string) => IDENTITY_FIELDS[header] ?? 'erp';
  return text
    .replace(
      /the (x-erp-[a-z-]+) header of the MCP client's configuration/g,
      (_, header: string) => `${field(header)} of ${entry} (ask an operator of this erp-proxy)`,
    )
    .replace(
      /\(((?:x-erp-[a-z-]+(?:, )?)+) in the MCP client's configuration\)/g,
      (_, headers: string) => `(${headers.split(', ').map(field).join(', ')} of ${entry})`,
    )
    .replace(
      /the MCP client's configuration sets the connection headers/g,
      `an operator of this erp-proxy sets the connection in ${entry}`,
    )
    .replace(/the (x-erp-[a-z-]+) header/g, (_, header: string) => `${field(header)} of ${entry}`)
    .replace(/x-erp-[a-z-]+/g, (header) => field(header));
}

/**
 * @module upstream/version-client
 * The target's version: `GET {url}/web/version` (ERP 19+), else `/jsonrpc` `common.version`
 * (every ERP up to 21). Results are cached per URL for a few minutes: a version only changes
 * when the target is upgraded.
 */
import { BadUpstreamResponseError, type ProxyError } from '../platform/errors.ts';
import {
  commonVersionOf,
  type ErpVersion,
  MAX_VERSION_TEXT_LENGTH,
  NotErpAnswerError,
  readWebVersionAnswer,
} from './erp-answer.ts';
import {
  type CallContext,
  classifyGatewayAnswer,
  databaseHeader,
  describeAnswer,
  sendExchange,
  upstreamUrl,
} from './erp-transport.ts';
import type { HttpClient } from './http-client.ts';
import { callJsonRpc } from './jsonrpc-transport.ts';
import { withPathHint } from './path-hint.ts';

const CACHE_TTL_MS = 5 * 60 * 1000;
const CACHE_MAX_ENTRIES = 500;

/**
 * The major version as a number: `19` from `[19, 0, ...]`, `18` from `["saas~18", 3, ...]`;
 * `undefined` when it cannot be read.
 */
export function majorVersion(version: ErpVersion): number | undefined {
  const major = version.version_info[0];
  if (typeof major === 'number') return Number.isSafeInteger(major) ? major : undefined;
  const digits = typeof major === 'string' ? /^(?:saas~)?(\d{1,4})(?:\.\d+)?$/.exec(major)?.[1] : undefined;
  return digits === undefined ? undefined : Number(digits);
}

function cacheKey(baseUrl: URL): string {
  return baseUrl.href.replace(/\/+$/, '');
}

/** `/web/version` told no version: what it answered instead, and a redirect to report. */
interface WebVersionMiss {
  readonly answer: string;
  readonly redirect?: ProxyError;
}

export class VersionClient {
  private readonly cache = new Map<string, { version: ErpVersion; expires: number }>();

  constructor(private readonly client: HttpClient) {}

  /** The target's version if it is cached, without asking the ERP. */
  cached(baseUrl: URL): ErpVersion | undefined {
    const cached = this.cache.get(cacheKey(baseUrl));
    return cached && cached.expires > Date.now() ? cached.version : undefined;
  }

  /**
   * The target's version, from the cache or the ERP. `database`, when known, travels as
   * `X-Odoo-Database`: on a host with several databases it spares the ERP a database listing
   * (a new PostgreSQL connection) per request.
   */
  async version(baseUrl: URL, context: CallContext, database?: string): Promise<ErpVersion> {
    const key = cacheKey(baseUrl);
    const cached = this.cached(baseUrl);
    if (cached) return cached;

    let version: ErpVersion;
    try {
      const web = await this.fromWebVersion(baseUrl, context, database);
      version =
        'version' in web ? web.version : await this.fromCommonVersion(baseUrl, context, web, database);
    } catch (error) {
      // A URL with a path that does not answer as an ERP: name the address without the path.
      throw withPathHint(error, baseUrl);
    }
    if (this.cache.size >= CACHE_MAX_ENTRIES) this.cache.clear();
    this.cache.set(key, { version, expires: Date.now() + CACHE_TTL_MS });
    return version;
  }

  /**
   * Odoo 19's `{version_info, version}`, or nothing when the route does not exist (older ERPs).
   * A redirect is kept: if the fallback fails too, the client learns where it pointed.
   */
  private async fromWebVersion(
    baseUrl: URL,
    context: CallContext,
    database: string | undefined,
  ): Promise<{ version: ErpVersion } | WebVersionMiss> {
    const response = await sendExchange(this.client, context, {
      method: 'GET',
      url: upstreamUrl(baseUrl, '/web/version'),
      headers: databaseHeader(database),
    });
    const gateway = classifyGatewayAnswer(response);
    // Busy, unreachable or timed out: the fallback would fail the same way.
    if (gateway && response.status >= 400) throw gateway;
    if (gateway) return { redirect: gateway, answer: describeAnswer(response) };
    const version = readWebVersionAnswer(response);
    return version ? { version } : { answer: describeAnswer(response) };
  }

  private async fromCommonVersion(
    baseUrl: URL,
    context: CallContext,
    web: WebVersionMiss,
    database: string | undefined,
  ): Promise<ErpVersion> {
    let outcome: Awaited<ReturnType<typeof callJsonRpc>>;
    try {
      outcome = await callJsonRpc(this.client, context, baseUrl, 'common', 'version', '[]', database);
    } catch (error) {
      if (error instanceof BadUpstreamResponseError) {
        if (web.redirect) throw web.redirect;
        const jsonrpc = error instanceof NotErpAnswerError ? ` (${error.answer})` : '';
        throw new BadUpstreamResponseError(
          `The target answered neither GET /web/version (${web.answer}) nor /jsonrpc common.version${jsonrpc} ` +
            'like an ERP. Check the URL (url on the version endpoints, erp_instance.url on execute).',
          { cause: error },
        );
      }
      throw error;
    }
    const value =
      outcome.kind === 'raw_result'
        ? JSON.parse(outcome.json.toString('utf8'))
        : outcome.kind === 'result'
          ? outcome.value
          : undefined;
    const version = commonVersionOf(value);
    if (version) return version;
    throw new BadUpstreamResponseError(
      'The target answered common.version without a usable version: expected server_version_info as ' +
        `[major, minor, micro, release_level, serial, edition] (non-negative integers and strings of at most ${MAX_VERSION_TEXT_LENGTH} characters) and a short server_version.`,
    );
  }
}

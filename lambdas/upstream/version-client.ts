/**
 * @module upstream/version-client
 * The target's version: `GET {url}/web/version` (ERP 19+), else `/jsonrpc` `common.version`
 * (every ERP up to 21). Results are cached per URL for a few minutes: a version only changes
 * when the target is upgraded.
 */
import { BadUpstreamResponseError, type ProxyError } from '../platform/errors.ts';
import { isJsonObject } from '../platform/json.ts';
import {
  type CallContext,
  classifyGatewayAnswer,
  databaseHeader,
  parseJsonBody,
  sendExchange,
  upstreamUrl,
} from './erp-transport.ts';
import type { HttpClient } from './http-client.ts';
import { callJsonRpc } from './jsonrpc-transport.ts';

/**
 * `version_info` as the specification gives it: `[major, minor, micro, release_level, serial,
 * edition]`, integers and strings in that order. The major may be a string (`"saas~18"`: Odoo's
 * `release.py` lets it become one during a release).
 */
export type ErpVersionInfo = readonly [number | string, number, number, string, number, string];

export interface ErpVersion {
  readonly version_info: ErpVersionInfo;
  readonly version: string;
}

/**
 * Longest string accepted in a version answer (`version`, a string major, the release level,
 * the edition). Real ones are short: `"saas~17.2+e-20241113"` is 20 characters.
 */
export const MAX_VERSION_TEXT_LENGTH = 64;

const CACHE_TTL_MS = 5 * 60 * 1000;
const CACHE_MAX_ENTRIES = 500;

/** A version number part: a non-negative safe integer (`19`, `0`; never `-1`, `0.5` or `1e308`). */
function isVersionNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function isVersionText(value: unknown, minLength = 0): value is string {
  return typeof value === 'string' && value.length >= minLength && value.length <= MAX_VERSION_TEXT_LENGTH;
}

/**
 * The version answer in the shape the specification gives, or `undefined` for any other shape:
 * exactly six elements, `[int | string, int, int, string, int, string]` with the integers
 * non-negative and safe and the strings at most {@link MAX_VERSION_TEXT_LENGTH} characters (a
 * string major and `version` not empty). What real ERPs answer passes: `[19, 0, 0, "final", 0,
 * ""]`, `["saas~18", 3, 0, "final", 0, ""]`, `["saas~17", 2, 0, "final", 0, "e"]`. A new array
 * is returned, so nothing else the ERP put in the answer is passed on.
 */
export function toErpVersion(versionInfo: unknown, version: unknown): ErpVersion | undefined {
  if (!Array.isArray(versionInfo) || versionInfo.length !== 6) return undefined;
  const [major, minor, micro, releaseLevel, serial, edition] = versionInfo as unknown[];
  const majorOk = isVersionNumber(major) || isVersionText(major, 1);
  if (
    !majorOk ||
    !isVersionNumber(minor) ||
    !isVersionNumber(micro) ||
    !isVersionText(releaseLevel) ||
    !isVersionNumber(serial) ||
    !isVersionText(edition) ||
    !isVersionText(version, 1)
  ) {
    return undefined;
  }
  return { version_info: [major as number | string, minor, micro, releaseLevel, serial, edition], version };
}

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

    const web = await this.fromWebVersion(baseUrl, context, database);
    const version =
      'version' in web ? web.version : await this.fromCommonVersion(baseUrl, context, web.redirect, database);
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
  ): Promise<{ version: ErpVersion } | { redirect?: ProxyError }> {
    const response = await sendExchange(this.client, context, {
      method: 'GET',
      url: upstreamUrl(baseUrl, '/web/version'),
      headers: databaseHeader(database),
    });
    const gateway = classifyGatewayAnswer(response);
    // Busy, unreachable or timed out: the fallback would fail the same way.
    if (gateway && response.status >= 400) throw gateway;
    if (gateway) return { redirect: gateway };
    if (response.status !== 200) return {};
    const json = parseJsonBody(response);
    if (!json.ok || !isJsonObject(json.value)) return {};
    const version = toErpVersion(json.value.version_info, json.value.version);
    return version ? { version } : {};
  }

  private async fromCommonVersion(
    baseUrl: URL,
    context: CallContext,
    redirect: ProxyError | undefined,
    database: string | undefined,
  ): Promise<ErpVersion> {
    let outcome: Awaited<ReturnType<typeof callJsonRpc>>;
    try {
      outcome = await callJsonRpc(this.client, context, baseUrl, 'common', 'version', '[]', database);
    } catch (error) {
      if (error instanceof BadUpstreamResponseError) {
        if (redirect) throw redirect;
        throw new BadUpstreamResponseError(
          'The target answered neither GET /web/version nor /jsonrpc common.version like an ERP. Check erp_instance.url / url.',
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
    const version = isJsonObject(value)
      ? toErpVersion(value.server_version_info, value.server_version)
      : undefined;
    if (version) return version;
    throw new BadUpstreamResponseError(
      'The target answered common.version without a usable version: expected server_version_info as ' +
        `[major, minor, micro, release_level, serial, edition] (non-negative integers and strings of at most ${MAX_VERSION_TEXT_LENGTH} characters) and a short server_version.`,
    );
  }
}

/**
 * @module @erp-proxy/client
 * A typed client for erp-proxy: version detection cached per target, v2 on ERP 19 and later and
 * v1 below, typed errors that say whether the call may have run, and retries only when it
 * certainly did not.
 *
 * @example
 * ```ts
 * import { ErpProxy, ErpProxyError, ErpError } from '@erp-proxy/client';
 * const proxy = new ErpProxy({ url: 'http://127.0.0.1:8787', apiKey: proxyKey });
 * const erp = proxy.erp({ url: 'https://erp.example.com', db: 'prod', apiKey: erpKey, userId: 2 });
 * const partners = await erp.searchRead('res.partner', [['is_company', '=', true]], { fields: ['name'], limit: 5 });
 * ```
 */
export { type AnsweredBy, ErpError, ErpProxyError, type ErpProxyErrorInit } from './errors.js';
export {
  ABORT_MARGIN_SECONDS,
  DEFAULT_RETRIES,
  ErpProxy,
  type ErpProxyOptions,
  GATEWAY_TIMEOUT_SECONDS,
  parseServerTiming,
} from './proxy.js';
export { PROXY_CODES, type ProxyCode } from './proxy-codes.js';
export { MAX_RETRY_AFTER_SECONDS, type RetryEvent } from './retry.js';
export {
  type ContextOptions,
  ErpTarget,
  type ErpTargetOptions,
  FIRST_V2_MAJOR,
  type FieldsGetOptions,
  majorVersion,
  type ReadOptions,
  type SearchCountOptions,
  type SearchOptions,
  type SearchReadOptions,
} from './target.js';
export { toV1Call, type V1Call } from './translate.js';
export type {
  AnswerInfo,
  CallOptions,
  Domain,
  ErpInstanceV1,
  ErpInstanceV2,
  JsonObject,
  ProxyCalls,
  ServerTiming,
  V1Action,
  V1Body,
  V2Body,
  VersionInfo,
  VersionOptions,
} from './types.js';
export { ulid } from './ulid.js';

/**
 * @module types
 * The shapes the client sends and receives (README of the proxy, "Calling the proxy").
 */

/** A JSON object: `kwargs`, `keyword`, `context`, record values. */
export type JsonObject = { [key: string]: unknown };

/** A domain in v2's form: the list of conditions itself, e.g. `[['is_company', '=', true]]`. */
export type Domain = readonly unknown[];

/** `erp_instance` of a v1 body. */
export interface ErpInstanceV1 {
  url: string;
  db: string;
  user_id: number;
  api_key: string;
}

/** `erp_instance` of a v2 body (a v1 one works too: `user_id` is ignored). */
export interface ErpInstanceV2 {
  url: string;
  db: string;
  api_key: string;
  user_id?: number;
}

/** The 9 v1 actions. */
export type V1Action =
  | 'search_count'
  | 'search'
  | 'read'
  | 'fields_get'
  | 'search_read'
  | 'create'
  | 'write'
  | 'unlink'
  | 'call_method';

/** The body of `POST /api/erp/execute`; `id` is a fresh ULID when left out. */
export interface V1Body {
  id?: string;
  action: V1Action;
  model_id: string;
  params?: unknown[];
  keyword?: JsonObject;
  fn_name?: string;
  erp_instance: ErpInstanceV1;
}

/** The body of `POST /v2/erp/execute`; `id` is a fresh ULID when left out. */
export interface V2Body {
  id?: string;
  model_id: string;
  method: string;
  kwargs: JsonObject;
  erp_instance: ErpInstanceV2;
}

/** The result of a version endpoint. */
export interface VersionInfo {
  /** `[major, minor, micro, release_level, serial, edition]`; the major can be a string (`saas~18`). */
  version_info: [number | string, number | string, number, string, number, string];
  version: string;
}

/**
 * An answer's `Server-Timing`, parsed: milliseconds by metric. The proxy names `erp` (its requests
 * to the ERP), `store` (its state store and audit, when the call used them) and `proxy` (the rest).
 */
export type ServerTiming = Readonly<Record<string, number>>;

/** What one answer of the proxy says of itself, whatever it holds (`onAnswer`). */
export interface AnswerInfo {
  /**
   * The proxy's id of the request: its `Request-Id`, else API Gateway's `apigw-requestid` (the
   * gateway's own answers: throttling, 413, a failed function). Send it when reporting a problem.
   */
  readonly requestId: string | undefined;
  /** The answer's `Server-Timing`; `undefined` when it has none (version and gateway answers, `SERVER_TIMING=off`). */
  readonly serverTiming: ServerTiming | undefined;
  /** The answer's HTTP status. */
  readonly httpStatus: number;
  /** The envelope `id` of the call. */
  readonly id: string;
}

/** Per-call settings, accepted by every call. */
export interface CallOptions {
  /** The envelope `id`; a fresh ULID by default. Retries of one call send the same id. */
  id?: string;
  /** This call's upstream timeout in seconds (`x-request-timeout`), instead of the client's. */
  timeoutSeconds?: number;
  /**
   * Execute calls: the `Idempotency-Key` to send (one logical operation, e.g. kept in your own
   * job record so a restarted job reuses it), or `false` to send none: 1 to 255 visible ASCII
   * characters, no comma (a `TypeError` otherwise). By default a fresh ULID per call, reused on the
   * client's own retries (README of the proxy, "Retrying writes safely").
   */
  idempotencyKey?: string | false;
  /**
   * Called with each answer of this call (each attempt's), before its result is returned or its
   * error thrown: its request id and `Server-Timing`. An error the hook throws is the call's.
   */
  onAnswer?: (answer: AnswerInfo) => void;
}

/** Options of a version lookup. */
export interface VersionOptions extends CallOptions {
  /** Ask the proxy again instead of using the cached answer (after the target was upgraded). */
  refresh?: boolean;
}

/**
 * The calls an `ErpTarget` makes through a proxy: what `ErpProxy` offers, as an interface,
 * so a target depends on it and not on the class (a test double, or a proxy with other transport,
 * fits too).
 */
export interface ProxyCalls {
  v1<T = unknown>(body: V1Body, options?: CallOptions): Promise<T>;
  v2<T = unknown>(body: V2Body, options?: CallOptions): Promise<T>;
  version(url: string, options?: VersionOptions): Promise<VersionInfo>;
}

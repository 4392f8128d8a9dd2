/**
 * @module target
 * `ErpTarget`: one ERP (URL, database, key) behind the proxy. Every call takes v2's argument
 * forms; it runs on v2 when the target is ERP 19 or later, and is translated to v1 otherwise.
 */
import { ErpProxyError } from './errors.js';
import { INVALID_REQUEST } from './proxy-codes.js';
import { toV1Call } from './translate.js';
import type { CallOptions, Domain, JsonObject, ProxyCalls, VersionInfo, VersionOptions } from './types.js';

/** Options of `ErpProxy.erp`: the target ERP and the ERP user's credentials. */
export interface ErpTargetOptions {
  /** The ERP's base URL. */
  url: string;
  /** The database. */
  db: string;
  /** An API key of the ERP user (never the proxy key). */
  apiKey: string;
  /** The ERP user's id: needed only for targets older than ERP 19, which are called through v1. */
  userId?: number;
}

/** The first ERP major version whose calls go through v2 (JSON-2). */
export const FIRST_V2_MAJOR = 19;

/** Options of {@link ErpTarget.searchRead}. */
export interface SearchReadOptions extends CallOptions {
  fields?: string[];
  limit?: number;
  offset?: number;
  order?: string;
  context?: JsonObject;
}

/** Options of {@link ErpTarget.search}. */
export interface SearchOptions extends CallOptions {
  limit?: number;
  offset?: number;
  order?: string;
  context?: JsonObject;
}

/** Options of {@link ErpTarget.searchCount}. */
export interface SearchCountOptions extends CallOptions {
  limit?: number;
  context?: JsonObject;
}

/** Options of {@link ErpTarget.read}. */
export interface ReadOptions extends CallOptions {
  fields?: string[];
  context?: JsonObject;
}

/** Options of {@link ErpTarget.fieldsGet}. */
export interface FieldsGetOptions extends CallOptions {
  allfields?: string[];
  attributes?: string[];
  context?: JsonObject;
}

/** Options of the helpers that take only a context. */
export interface ContextOptions extends CallOptions {
  context?: JsonObject;
}

/** The ERP major version of a version answer (`19`, `"saas~18"` → 18); NaN when there is none. */
export function majorVersion(info: VersionInfo): number {
  const first: unknown = info.version_info[0];
  if (typeof first === 'number') return first;
  const match = /(\d+)/.exec(typeof first === 'string' ? first : String(info.version ?? ''));
  return match ? Number(match[1]) : Number.NaN;
}

/** `object` without its `undefined` members. */
function defined(object: Record<string, unknown>): JsonObject {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined));
}

function callOptions(options: CallOptions): CallOptions {
  return defined({
    id: options.id,
    timeoutSeconds: options.timeoutSeconds,
    idempotencyKey: options.idempotencyKey,
    onAnswer: options.onAnswer,
  });
}

/** One target ERP, from `ErpProxy.erp`. */
export class ErpTarget {
  readonly url: string;
  readonly db: string;
  readonly userId: number | undefined;
  readonly #apiKey: string;
  readonly #proxy: ProxyCalls;

  constructor(proxy: ProxyCalls, options: ErpTargetOptions) {
    if (typeof options.url !== 'string' || typeof options.db !== 'string' || options.db.length === 0) {
      throw new TypeError('proxy.erp: url and db are required');
    }
    if (typeof options.apiKey !== 'string' || options.apiKey.length === 0) {
      throw new TypeError('proxy.erp: apiKey (an API key of the ERP user) is required');
    }
    if (options.userId !== undefined && !Number.isInteger(options.userId)) {
      throw new TypeError(`proxy.erp: userId must be an integer, not ${String(options.userId)}`);
    }
    this.#proxy = proxy;
    this.url = options.url.replace(/\/+$/, '');
    this.db = options.db;
    this.#apiKey = options.apiKey;
    this.userId = options.userId;
  }

  /** `{version_info, version}` of the target, asked once and cached by the proxy client. */
  version(options: VersionOptions = {}): Promise<VersionInfo> {
    return this.#proxy.version(this.url, options);
  }

  /** The API the calls to this target use: `v2` on ERP 19 and later, `v1` below. */
  async api(): Promise<'v1' | 'v2'> {
    return majorVersion(await this.version()) >= FIRST_V2_MAJOR ? 'v2' : 'v1';
  }

  /**
   * Calls `model.method(**kwargs)`, with named arguments as in JSON-2 (`ids` only for record
   * methods). On a target older than ERP 19 the call is translated to v1, which needs `userId`.
   */
  async call<T = unknown>(
    model: string,
    method: string,
    kwargs: JsonObject = {},
    options: CallOptions = {},
  ): Promise<T> {
    const info = await this.version();
    if (majorVersion(info) >= FIRST_V2_MAJOR) {
      return this.#proxy.v2<T>(
        {
          model_id: model,
          method,
          kwargs,
          erp_instance: { url: this.url, db: this.db, api_key: this.#apiKey },
        },
        options,
      );
    }
    if (this.userId === undefined) {
      throw new ErpProxyError({
        code: INVALID_REQUEST,
        message:
          `${this.url} runs ERP ${info.version}, older than ${FIRST_V2_MAJOR}: calls go through v1, which needs ` +
          'the ERP user id. Pass userId to proxy.erp({ url, db, apiKey, userId }).',
        httpStatus: 0,
        mayHaveRun: false,
        id: options.id,
      });
    }
    return this.#proxy.v1<T>(
      {
        model_id: model,
        ...toV1Call(method, kwargs),
        erp_instance: { url: this.url, db: this.db, user_id: this.userId, api_key: this.#apiKey },
      },
      options,
    );
  }

  /** Records matching `domain` (v2's form: the list of conditions), with `fields`. */
  searchRead<T extends JsonObject = JsonObject>(
    model: string,
    domain: Domain = [],
    options: SearchReadOptions = {},
  ): Promise<T[]> {
    const { fields, limit, offset, order, context } = options;
    return this.call<T[]>(
      model,
      'search_read',
      defined({ domain, fields, limit, offset, order, context }),
      callOptions(options),
    );
  }

  /** Ids of the records matching `domain`. */
  search(model: string, domain: Domain = [], options: SearchOptions = {}): Promise<number[]> {
    const { limit, offset, order, context } = options;
    return this.call<number[]>(
      model,
      'search',
      defined({ domain, limit, offset, order, context }),
      callOptions(options),
    );
  }

  /** How many records match `domain`. */
  searchCount(model: string, domain: Domain = [], options: SearchCountOptions = {}): Promise<number> {
    const { limit, context } = options;
    return this.call<number>(
      model,
      'search_count',
      defined({ domain, limit, context }),
      callOptions(options),
    );
  }

  /** The records `ids`, with `fields` (all by default). */
  read<T extends JsonObject = JsonObject>(
    model: string,
    ids: readonly number[],
    options: ReadOptions = {},
  ): Promise<T[]> {
    const { fields, context } = options;
    return this.call<T[]>(model, 'read', defined({ ids, fields, context }), callOptions(options));
  }

  /** The model's field descriptions. */
  fieldsGet(model: string, options: FieldsGetOptions = {}): Promise<Record<string, JsonObject>> {
    const { allfields, attributes, context } = options;
    return this.call<Record<string, JsonObject>>(
      model,
      'fields_get',
      defined({ allfields, attributes, context }),
      callOptions(options),
    );
  }

  /** Creates one record and returns its id, or several (a list of values) and returns their ids. */
  create(model: string, vals: JsonObject, options?: ContextOptions): Promise<number>;
  create(model: string, valsList: readonly JsonObject[], options?: ContextOptions): Promise<number[]>;
  async create(
    model: string,
    vals: JsonObject | readonly JsonObject[],
    options: ContextOptions = {},
  ): Promise<number | number[]> {
    const single = !Array.isArray(vals);
    const valsList = single ? [vals] : vals;
    const ids = await this.call<number[]>(
      model,
      'create',
      defined({ vals_list: valsList, context: options.context }),
      callOptions(options),
    );
    return single ? (ids[0] as number) : ids;
  }

  /** Writes `vals` on the records `ids`. */
  write(
    model: string,
    ids: readonly number[],
    vals: JsonObject,
    options: ContextOptions = {},
  ): Promise<boolean> {
    return this.call<boolean>(
      model,
      'write',
      defined({ ids, vals, context: options.context }),
      callOptions(options),
    );
  }

  /** Deletes the records `ids`. */
  unlink(model: string, ids: readonly number[], options: ContextOptions = {}): Promise<boolean> {
    return this.call<boolean>(
      model,
      'unlink',
      defined({ ids, context: options.context }),
      callOptions(options),
    );
  }
}

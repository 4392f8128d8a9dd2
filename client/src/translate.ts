/**
 * @module translate
 * A call in v2's form (a method and named `kwargs`) as a v1 call, following the proxy README's
 * "From v1 to v2" table backwards: the domain goes first in `params` (wrapped once more than
 * in v2), record ids and `vals_list` are positional, everything else is `keyword`.
 */
import type { JsonObject, V1Action } from './types.js';

/** The parts of a v1 body that depend on the call. */
export interface V1Call {
  action: V1Action;
  fn_name?: string;
  params: unknown[];
  keyword: JsonObject;
}

/** `kwargs` without `key`, and the value it had. */
function take(kwargs: JsonObject, key: string): [unknown, JsonObject] {
  const { [key]: value, ...rest } = kwargs;
  return [value, rest];
}

/** The v1 form of the v2 call `method(**kwargs)`. */
export function toV1Call(method: string, kwargs: JsonObject): V1Call {
  switch (method) {
    case 'search_read':
    case 'search':
    case 'search_count': {
      const [domain, keyword] = take(kwargs, 'domain');
      return { action: method, params: [domain ?? []], keyword };
    }
    case 'create': {
      // A list of values, positional: the ERP then answers a list of ids, as v2 does.
      const [valsList, keyword] = take(kwargs, 'vals_list');
      return { action: method, params: valsList === undefined ? [] : [valsList], keyword };
    }
    case 'fields_get':
      return { action: method, params: [], keyword: { ...kwargs } };
    case 'read':
    case 'write':
    case 'unlink': {
      const [ids, keyword] = take(kwargs, 'ids');
      return { action: method, params: ids === undefined ? [] : [ids], keyword };
    }
    default: {
      // Any other method: `ids` (record methods only) is the first positional argument.
      const [ids, keyword] = take(kwargs, 'ids');
      return { action: 'call_method', fn_name: method, params: ids === undefined ? [] : [ids], keyword };
    }
  }
}

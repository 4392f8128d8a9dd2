/**
 * @module core/mcp/answers
 * What an MCP tool answers (README, "Agents (MCP)"): JSON text, at most {@link MAX_RESULT_CHARS}
 * characters, cut by whole items (records, fields) with a note that says how to get the rest; and
 * errors as tool results with `isError: true` that carry the code, the message, the ERP's
 * exception name and whether retrying is safe, in words an agent can follow.
 */
import { echoed, MAX_ERROR_MESSAGE_CHARS } from '../../platform/bounded-text.ts';
import { type CallRan, PROXY_ERRORS } from '../../platform/error-table.ts';
import { InternalError, type ProxyError } from '../../platform/errors.ts';
import { isJsonObject } from '../../platform/json.ts';

/**
 * The longest JSON text a tool answers with: about 12 000-25 000 tokens, within what MCP clients
 * pass to a model without cutting it themselves (some warn above 25 000 tokens). A larger result
 * is cut by whole items, with a note saying how to page.
 */
export const MAX_RESULT_CHARS = 50_000;

/**
 * {@link MAX_RESULT_CHARS} in words, "50,000 characters" (digits grouped as `toLocaleString('en-US')`
 * groups them, without it: its first call loads ICU's locale data, 15-40 ms of a cold start here).
 */
export const MAX_RESULT_WORDS = `${String(MAX_RESULT_CHARS).replace(/\B(?=(\d{3})+$)/g, ',')} characters`;

/** A tool's answer before it becomes MCP content. */
export interface ToolAnswer {
  /** JSON text of the result (always valid JSON, also when cut). */
  readonly json: string;
  /** A sentence for the agent: how the result was cut or how to page; none when nothing to say. */
  readonly note?: string;
}

/** What {@link fitJson} kept of a value. */
export interface Fitted {
  readonly json: string;
  /** Items (array elements or object members) kept, when the value was cut; else undefined. */
  readonly kept?: number;
  /** Items the value has (arrays and objects). */
  readonly total?: number;
}

/**
 * The value as compact JSON, cut to at most `max` characters by whole array elements or object
 * members (the first ones, in order); a string too long is cut itself. `kept` says how many
 * items stayed when the value was cut.
 */
export function fitJson(value: unknown, max: number = MAX_RESULT_CHARS): Fitted {
  const whole = JSON.stringify(value) ?? 'null';
  if (whole.length <= max) {
    return Array.isArray(value) || isJsonObject(value)
      ? { json: whole, total: Array.isArray(value) ? value.length : Object.keys(value).length }
      : { json: whole };
  }
  if (Array.isArray(value)) {
    const parts: string[] = [];
    let size = 2;
    for (const item of value) {
      const text = JSON.stringify(item) ?? 'null';
      const added = text.length + (parts.length > 0 ? 1 : 0);
      if (size + added > max) break;
      parts.push(text);
      size += added;
    }
    return { json: `[${parts.join(',')}]`, kept: parts.length, total: value.length };
  }
  if (isJsonObject(value)) {
    const parts: string[] = [];
    let size = 2;
    const entries = Object.entries(value);
    for (const [key, item] of entries) {
      const text = `${JSON.stringify(key)}:${JSON.stringify(item) ?? 'null'}`;
      const added = text.length + (parts.length > 0 ? 1 : 0);
      if (size + added > max) break;
      parts.push(text);
      size += added;
    }
    return { json: `{${parts.join(',')}}`, kept: parts.length, total: entries.length };
  }
  if (typeof value === 'string') {
    // Escapes make the JSON longer than the text: shrink until it fits.
    let length = Math.min(value.length, max - 2);
    let json = JSON.stringify(value.slice(0, length));
    while (json.length > max && length > 0) {
      length = Math.max(0, length - (json.length - max) - 1);
      json = JSON.stringify(value.slice(0, length));
    }
    return { json, kept: length, total: value.length };
  }
  return { json: whole };
}

/** How a tool failed, as its error result says it. */
export interface ToolFailure {
  /** `erp`: the ERP's own error; `proxy`: the proxy's (the error table's code). */
  readonly source: 'erp' | 'proxy';
  readonly code: number;
  readonly message: string;
  /** The ERP's exception class (`data.name`), for ERP errors. */
  readonly name?: string;
  /** Whether calling again cannot make the change happen twice. */
  readonly retrySafe: boolean;
  /** What to do, in words. */
  readonly retry: string;
}

/** What an agent should do after an ERP error, by the HTTP-style code JSON-2 gives it. */
const ERP_ERROR_ADVICE: Readonly<Record<number, string>> = Object.freeze({
  401: "The ERP refused the API key of this connection (the x-erp-api-key header: invalid, expired or revoked). Retrying cannot help: the MCP client's configuration must change.",
  403: 'The ERP user may not do this (access rights). Retrying cannot help: try another model or operation, or ask an ERP administrator.',
  404: 'The model, method or record does not exist. Check the name (list_models, fields_get) or the ids; retrying unchanged fails the same way.',
  409: 'Another transaction holds the record (a lock conflict). Retry after a short wait.',
  422: 'The ERP refused the arguments or the values. Fix them as the message says; retrying unchanged fails the same way.',
});

const ERP_ERROR_DEFAULT_ADVICE =
  'The ERP failed while running the call. Fix the arguments (domain, fields, values) as the message says; retrying unchanged fails the same way.';

/**
 * An ERP error as a tool failure. The ERP rolls its transaction back when a call fails, so the
 * call changed nothing and calling again is safe; whether it can succeed is what the advice says.
 */
export function erpFailure(code: number, message: string, data: unknown): ToolFailure {
  const name = isJsonObject(data) && typeof data.name === 'string' ? echoed(data.name, 256) : undefined;
  return {
    source: 'erp',
    code,
    // The ERP's own words, bounded as the proxy's messages are (a long one helps no agent).
    message: echoed(message, MAX_ERROR_MESSAGE_CHARS),
    ...(name === undefined ? {} : { name }),
    retrySafe: true,
    retry: `${ERP_ERROR_ADVICE[code] ?? ERP_ERROR_DEFAULT_ADVICE} The ERP rolled the call back: nothing was changed.`,
  };
}

/** What the error table's `callRan` means for a tool that only reads, or one that writes. */
function proxyAdvice(
  error: ProxyError,
  callRan: CallRan,
  readOnly: boolean,
): Pick<ToolFailure, 'retrySafe' | 'retry'> {
  if (error.code === PROXY_ERRORS.upstreamUnavailable.code) {
    return { retrySafe: true, retry: 'The call did not run. Retrying after a short wait is safe.' };
  }
  if (callRan === 'no') {
    return {
      retrySafe: true,
      retry:
        'The call did not run, so retrying is safe, but the same call fails the same way: fix what the message says first.',
    };
  }
  if (error.code === PROXY_ERRORS.responseTooLarge.code) {
    return readOnly
      ? {
          retrySafe: true,
          retry: 'The ERP answered, but too much: ask for less (a smaller limit, fewer fields or ids).',
        }
      : {
          retrySafe: false,
          retry: 'The call ran on the ERP (only its answer was too large to pass on): do not call it again.',
        };
  }
  return readOnly
    ? {
        retrySafe: true,
        retry: 'The call may have run on the ERP, but this tool only reads: retrying is safe.',
      }
    : {
        retrySafe: false,
        retry:
          'The call may have run on the ERP: check the records (search_read, read) before calling again, or the change may happen twice.',
      };
}

/** The proxy's names for the connection, as an MCP client configures them. */
const MCP_WORDING: readonly (readonly [RegExp, string])[] = [
  [/\(url on the version endpoints, erp_instance\.url on execute\)/g, '(the x-erp-url header)'],
  [/erp_instance\.url/g, 'the x-erp-url header'],
  [/erp_instance\.db/g, 'the x-erp-db header'],
  [/erp_instance\.user_id/g, 'the x-erp-user-id header'],
  [/erp_instance\.api_key/g, 'the x-erp-api-key header'],
  [/ \(use v1\)/g, ''],
  [
    /Pass the arguments by name in keyword, or call v2 \(\/v2\/erp\/execute\) with named kwargs\./g,
    'Pass the arguments by name in kwargs instead of args.',
  ],
  [/both in params and in keyword/g, 'both in args and in kwargs'],
];

/** A proxy message in the words of an MCP connection (headers, not `erp_instance` fields). */
export function mcpWording(message: string): string {
  return MCP_WORDING.reduce((text, [pattern, replacement]) => text.replace(pattern, replacement), message);
}

/** A proxy error as a tool failure; `readOnly` says whether the tool only reads. */
export function proxyFailure(error: ProxyError, readOnly: boolean): ToolFailure {
  return {
    source: 'proxy',
    code: error.code,
    message:
      error instanceof InternalError
        ? 'Internal error (a bug of the proxy; its logs have the details).'
        : mcpWording(error.message),
    ...proxyAdvice(error, error.row.callRan, readOnly),
  };
}

/** The JSON text of a failure, as the tool result shows it. */
export function failureJson(failure: ToolFailure): string {
  return JSON.stringify({
    error: {
      source: failure.source,
      code: failure.code,
      ...(failure.name === undefined ? {} : { name: failure.name }),
      message: failure.message,
      retry_safe: failure.retrySafe,
      retry: failure.retry,
    },
  });
}

/**
 * @module core/mcp/answers
 * What an MCP tool answers (README, "Agents (MCP)"): JSON text, at most {@link MAX_RESULT_CHARS}
 * characters, cut by whole items (records, fields) with a note that says how to get the rest; and
 * errors as tool results with `isError: true` that carry the code, the message, the ERP's
 * exception name and whether retrying is safe, in words an agent can follow.
 */
import { echoed, MAX_ERROR_MESSAGE_CHARS } from '../../platform/bounded-text.ts';
import { type CallRan, PROXY_ERRORS, type ProxyErrorRow } from '../../platform/error-table.ts';
import {
  BrakedError,
  InternalError,
  KeyPolicyRefusedError,
  type ProxyError,
  RateLimitedError,
} from '../../platform/errors.ts';
import { isJsonObject } from '../../platform/json.ts';
import type { KeyPolicyRule } from '../../platform/key-policy.ts';
import type { ErpVersion } from '../../upstream/erp-answer.ts';
import type { ErpFacts } from './erp-access.ts';
import { keysHaveScopes, SCOPED_KEY_401_ADVICE } from './key-scope.ts';

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

/** A tool's answer before it becomes MCP content, with what its ERP calls told the request log. */
export interface ToolAnswer {
  /** JSON text of the result (always valid JSON, also when cut). */
  readonly json: string;
  /** A sentence for the agent: how the result was cut or how to page; none when nothing to say. */
  readonly note?: string;
  /**
   * The same result as a JSON object, for a tool that declares an `outputSchema` (it fits that
   * schema): what `structuredContent` carries beside the text.
   */
  readonly structured?: Readonly<Record<string, unknown>>;
  /** The facts of the ERP call the answer comes from (the last one, for a tool that makes several). */
  readonly facts: ErpFacts;
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
  /** Safe to retry: calling again cannot make a change happen twice. */
  readonly retrySafe: boolean;
  /** Retrying can help: the same call may succeed later, unchanged. */
  readonly retryCanHelp: boolean;
  /** What to do, in words: what the model can change, or what to tell its user. */
  readonly retry: string;
  /** A limit's refusal (README, "Limits"): the seconds to wait before calling again. */
  readonly retryAfterSeconds?: number;
}

/** What to do after a failure, and whether retrying is safe and can help. */
type Advice = Pick<ToolFailure, 'retrySafe' | 'retryCanHelp' | 'retry' | 'retryAfterSeconds'>;

/** What only the user (the MCP client's configuration) or an operator can change, said as such. */
const TELL_THE_USER = 'Retrying cannot help, and the model cannot change this: tell the user';

/** What an agent should do after an ERP error, by the HTTP-style code JSON-2 gives it. */
const ERP_ERROR_ADVICE: Readonly<Record<number, { readonly canHelp: boolean; readonly retry: string }>> =
  Object.freeze({
    401: {
      canHelp: false,
      retry: `The ERP refused the API key of this connection (invalid, expired or revoked). ${TELL_THE_USER} that the x-erp-api-key header of the MCP client's configuration needs a valid ERP API key.`,
    },
    403: {
      canHelp: false,
      retry:
        'The ERP user may not do this (access rights). Retrying cannot help: try another model or operation, or tell the user an ERP administrator can grant the right.',
    },
    404: {
      canHelp: false,
      retry:
        'The model, method or record does not exist. Check the name (list_models, fields_get) or the ids; retrying unchanged fails the same way.',
    },
    409: {
      canHelp: true,
      retry: 'Another transaction holds the record (a lock conflict). Retry after a short wait.',
    },
    422: {
      canHelp: false,
      retry:
        'The ERP refused the arguments or the values. Fix them as the message says; retrying unchanged fails the same way.',
    },
  });

const ERP_ERROR_DEFAULT_ADVICE = {
  canHelp: false,
  retry:
    'The ERP failed while running the call. Fix the arguments (domain, fields, values) as the message says; retrying unchanged fails the same way.',
};

/**
 * An ERP error as a tool failure. The ERP rolls its transaction back when a call fails, so the
 * call changed nothing and calling again is safe; whether it can succeed is what the advice says.
 * `version`: the ERP's, when known (a 401 on 19.4+ also names the key's scope, key-scope.ts).
 */
export function erpFailure(code: number, message: string, data: unknown, version?: ErpVersion): ToolFailure {
  const name = isJsonObject(data) && typeof data.name === 'string' ? echoed(data.name, 256) : undefined;
  const advice =
    code === 401 && keysHaveScopes(version)
      ? { canHelp: false, retry: SCOPED_KEY_401_ADVICE }
      : (ERP_ERROR_ADVICE[code] ?? ERP_ERROR_DEFAULT_ADVICE);
  return {
    source: 'erp',
    code,
    // The ERP's own words, bounded as the proxy's messages are (a long one helps no agent).
    message: echoed(message, MAX_ERROR_MESSAGE_CHARS),
    ...(name === undefined ? {} : { name }),
    retrySafe: true,
    retryCanHelp: advice.canHelp,
    retry: `${advice.retry} The ERP rolled the call back: nothing was changed.`,
  };
}

/**
 * What to do after a refusal by the caller key's policy, by the rule that refused: the rule the
 * error carries, which execute's -32008 names in its message and its log line (`policy_rule`) too,
 * so the tool error's message is execute's and its advice is that rule's. The key itself is the
 * user's or an operator's to change, never the model's. A caller signed in with OAuth has the
 * policy of its identity-map entry instead: {@link identityPolicyAdvice}.
 */
const KEY_POLICY_ADVICE: Readonly<Record<KeyPolicyRule, string>> = Object.freeze({
  api: `This key's policy does not allow this API. ${TELL_THE_USER} that it needs a key whose policy allows it.`,
  access:
    "This key's policy allows reading only: the read tools work, the tools that change data do not. " +
    `${TELL_THE_USER} that this change needs a key (or a sign-in) that may write.`,
  model:
    "This key's policy does not allow this model: use one it allows (list_models lists only those). " +
    'Retrying unchanged fails the same way; for this model, tell the user it needs a key that allows it.',
  database: `This key's policy does not allow the database of this connection. ${TELL_THE_USER} (the x-erp-db header, or a key that allows the database).`,
  target: `This key's policy does not allow the ERP of this connection. ${TELL_THE_USER} (the x-erp-url header, or a key that allows the ERP).`,
  confirm: `This key's policy has a person confirm this change before it runs. The message says what stopped it: a client that cannot show a form (it needs an MCP client on revision 2026-07-28 with elicitation: ${TELL_THE_USER.toLowerCase()}), or something the form cannot show (a context key, a value too long: send the call without it, or in smaller calls). The model cannot confirm it.`,
  method:
    "This key's policy does not allow this method on this model (the message names it): use another tool or method. " +
    'Retrying unchanged fails the same way; for this method, tell the user it needs a key that allows it.',
  field:
    "This key's policy denies a field of this model, or the proxy cannot read part of the call (the message names it: " +
    'a field, a context key, an argument): leave it out of fields, domain, order, groupby, values and context, and do not retry unchanged. Answers never carry a denied field.',
  company: `This key's policy scopes its calls to some companies: leave allowed_company_ids and the other company entries of the context out (the proxy sets them) and name no other company. ${TELL_THE_USER} if another company is needed.`,
});

/**
 * {@link KEY_POLICY_ADVICE} for a caller signed in with OAuth, whose policy (and connection) is the
 * operator's identity-map entry `entry`: no key and no `x-erp-*` header is theirs to change, the
 * entry (and the token's scopes, for writing) is an operator's.
 */
function identityPolicyAdvice(entry: string): Readonly<Record<KeyPolicyRule, string>> {
  const named = `the operator's identity map entry ${JSON.stringify(entry)}`;
  const policy = `The policy of ${named}`;
  const operator = 'an operator of this erp-proxy decides it in that entry';
  return {
    api: `${policy} does not allow this API. ${TELL_THE_USER} that ${operator}.`,
    access:
      `This sign-in may only read (the policy of ${named} allows reading only, or its token lacks the erp.write scope): ` +
      `the read tools work, the tools that change data do not. ${TELL_THE_USER} that this change needs a sign-in that may write.`,
    model:
      `${policy} does not allow this model: use one it allows (list_models lists only those). ` +
      `Retrying unchanged fails the same way; for this model, tell the user that ${operator}.`,
    database: `${policy} does not allow the database of this connection. ${TELL_THE_USER} that ${operator}.`,
    target: `${policy} does not allow the ERP of this connection. ${TELL_THE_USER} that ${operator}.`,
    confirm: `${policy} has a person confirm this change before it runs. The message says what stopped it: a client that cannot show a form (it needs an MCP client on revision 2026-07-28 with elicitation: ${TELL_THE_USER.toLowerCase()}), or something the form cannot show (a context entry, a value too long: send the call without it, or in smaller calls). The model cannot confirm it.`,
    method: `${policy} does not allow this method on this model (the message names it): use another tool or method. Retrying unchanged fails the same way; ${operator}.`,
    field: `${policy} denies a field of this model (the message names it): leave it out of fields, domain, order, groupby and values, and do not retry unchanged. Answers never carry it.`,
    company: `${policy} scopes its calls to some companies: leave allowed_company_ids and the other company entries of the context out (the proxy sets them) and name no other company; ${operator}.`,
  };
}

/** Advice by error table row (rows may share a code: -32008), for a tool that only reads and for one that writes. */
const PROXY_ADVICE: ReadonlyMap<ProxyErrorRow, (readOnly: boolean) => Advice> = new Map<
  ProxyErrorRow,
  (readOnly: boolean) => Advice
>([
  [
    PROXY_ERRORS.idempotencyInProgress,
    () => ({
      retrySafe: true,
      retryCanHelp: true,
      retry:
        'The first call with this idempotency_key is still running. Wait a few seconds, then call again with the SAME idempotency_key and arguments to get its result; a new key could make the change twice.',
    }),
  ],
  [
    PROXY_ERRORS.idempotencyKeyReused,
    () => ({
      retrySafe: true,
      retryCanHelp: false,
      retry:
        'Use a new idempotency_key for this new change. To retry the earlier change instead, send exactly its arguments, on the same connection, with its key.',
    }),
  ],
  [
    PROXY_ERRORS.upstreamUnavailable,
    () => ({
      retrySafe: true,
      retryCanHelp: true,
      retry: 'The call did not run. Retrying after a short wait is safe and may succeed.',
    }),
  ],
  [
    PROXY_ERRORS.upstreamTimeout,
    (readOnly) =>
      readOnly
        ? {
            retrySafe: true,
            retryCanHelp: true,
            retry:
              'The call may have run on the ERP, but this tool only reads: retrying is safe. A retry may succeed if the ERP was busy; asking for less (a narrower domain, a smaller limit, fewer fields) is likelier to.',
          }
        : {
            retrySafe: false,
            retryCanHelp: false,
            retry:
              'The call may have run on the ERP: check the records (search_read, read) before calling again, or the change may happen twice.',
          },
  ],
  [
    PROXY_ERRORS.badUpstreamResponse,
    (readOnly) => ({
      retrySafe: readOnly,
      retryCanHelp: false,
      retry: `The address of this connection does not answer as an ERP (the message says what came back). ${TELL_THE_USER} to check the x-erp-url header of the MCP client's configuration.${readOnly ? '' : ' The call may have run: check the records before calling it again.'}`,
    }),
  ],
  [
    PROXY_ERRORS.responseTooLarge,
    (readOnly) =>
      readOnly
        ? {
            retrySafe: true,
            retryCanHelp: false,
            retry: 'The ERP answered, but too much: ask for less (a smaller limit, fewer fields or ids).',
          }
        : {
            retrySafe: false,
            retryCanHelp: false,
            retry:
              'The call ran on the ERP (only its answer was too large to pass on): do not call it again.',
          },
  ],
  [
    PROXY_ERRORS.targetRefused,
    () => ({
      retrySafe: true,
      retryCanHelp: false,
      retry: `The call did not run. This proxy's operator does not allow this ERP or database. ${TELL_THE_USER}.`,
    }),
  ],
  [
    PROXY_ERRORS.json2Unavailable,
    () => ({
      retrySafe: true,
      retryCanHelp: false,
      retry: `The call did not run. ${TELL_THE_USER} what the message says about the connection (x-erp-url, x-erp-db in the MCP client's configuration).`,
    }),
  ],
  [
    PROXY_ERRORS.internal,
    (readOnly) => ({
      retrySafe: readOnly,
      retryCanHelp: false,
      retry: readOnly
        ? 'A bug of the proxy (its logs have the details); this tool only reads, so retrying is safe, but the same call will likely fail the same way.'
        : 'A bug of the proxy (its logs have the details). The call may have run: check the records before calling it again.',
    }),
  ],
]);

/** The proxy's -32600 for the connection: a header of the MCP client's configuration. */
function isConfigurationError(error: ProxyError): boolean {
  return error.code === PROXY_ERRORS.invalidRequest.code && /\bx-erp-[a-z-]+ header/.test(error.message);
}

/**
 * What the error table's `callRan` and the code mean for a tool that only reads, or one that
 * writes; `identity`: the identity-map entry of a caller signed in with OAuth (whose policy refused).
 */
function proxyAdvice(error: ProxyError, callRan: CallRan, readOnly: boolean, identity?: string): Advice {
  if (error instanceof RateLimitedError) {
    const seconds = error.retryAfterSeconds;
    return {
      retrySafe: true,
      retryCanHelp: true,
      retry: `The call did not run: a limit of the proxy refused it (the message says which). Wait ${seconds} second${seconds === 1 ? '' : 's'} (retry_after_seconds) before calling again; do not retry at once or in a loop.`,
      retryAfterSeconds: seconds,
    };
  }
  if (error instanceof BrakedError) {
    const seconds = error.retryAfterSeconds;
    return seconds === undefined
      ? {
          retrySafe: true,
          retryCanHelp: false,
          retry: `The call did not run: an operator of this proxy stopped it (the message gives their reason). ${TELL_THE_USER} that an operator stopped these calls, and why.`,
        }
      : {
          retrySafe: true,
          retryCanHelp: true,
          retry: `The call did not run: an operator of this proxy stopped it (the message gives their reason) until the brake expires in ${seconds} second${seconds === 1 ? '' : 's'} (retry_after_seconds). Tell the user why; do not retry in a loop.`,
          retryAfterSeconds: seconds,
        };
  }
  if (error instanceof KeyPolicyRefusedError) {
    const advice = identity === undefined ? KEY_POLICY_ADVICE : identityPolicyAdvice(identity);
    return {
      retrySafe: true,
      retryCanHelp: false,
      retry: `The call did not run. ${advice[error.rule]}`,
    };
  }
  const byRow = PROXY_ADVICE.get(error.row);
  if (byRow !== undefined) return byRow(readOnly);
  if (isConfigurationError(error)) {
    return {
      retrySafe: true,
      retryCanHelp: false,
      retry: `The call did not run. ${TELL_THE_USER} what the message says: the MCP client's configuration sets the connection headers.`,
    };
  }
  if (callRan === 'no') {
    return {
      retrySafe: true,
      retryCanHelp: false,
      retry: 'The call did not run; the same call fails the same way: fix what the message says first.',
    };
  }
  return readOnly
    ? {
        retrySafe: true,
        retryCanHelp: false,
        retry:
          'The call may have run on the ERP, but this tool only reads: retrying is safe, though unchanged it will likely fail the same way.',
      }
    : {
        retrySafe: false,
        retryCanHelp: false,
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
  // The time limit is the MCP client's configuration or the operator's, never the model's: the
  // retry advice says what the model can do instead.
  [/ Raise x-request-timeout for slow calls\./g, ''],
  // A tool's key is its argument, not a header.
  [/Idempotency-Key/g, 'idempotency_key'],
];

/**
 * Messages said otherwise to an agent, by error table row: the execute wording names what an agent
 * never sees (a route, a body, the `Idempotency-Key` header).
 */
const MCP_MESSAGES: ReadonlyMap<ProxyErrorRow, string> = new Map([
  [
    PROXY_ERRORS.idempotencyKeyReused,
    'Nothing ran: this idempotency_key was already used for another call (another tool, other arguments, or another ERP connection).',
  ],
]);

/** A proxy message in the words of an MCP connection (headers, not `erp_instance` fields). */
export function mcpWording(message: string): string {
  return MCP_WORDING.reduce((text, [pattern, replacement]) => text.replace(pattern, replacement), message);
}

/**
 * A key policy's refusal in the words of a caller signed in with OAuth: the policy that refused is
 * its identity-map entry's (`entry`), never a key (the person has none).
 */
function identityPolicyWording(message: string, entry: string): string {
  return message
    .replace(
      "Refused by this key's policy",
      `Refused by the policy of the operator's identity map entry ${JSON.stringify(entry)}`,
    )
    .replace(/this key's /g, 'its ')
    .replace(/this key /g, 'this identity ');
}

/**
 * A proxy error as a tool failure; `readOnly` says whether the tool only reads; `identity` names
 * the identity-map entry of a caller signed in with OAuth (`undefined`: a proxy key's caller).
 */
export function proxyFailure(error: ProxyError, readOnly: boolean, identity?: string): ToolFailure {
  const message =
    identity !== undefined && error instanceof KeyPolicyRefusedError
      ? identityPolicyWording(error.message, identity)
      : error.message;
  return {
    source: 'proxy',
    code: error.code,
    message:
      error instanceof InternalError
        ? 'Internal error (a bug of the proxy; its logs have the details).'
        : (MCP_MESSAGES.get(error.row) ?? mcpWording(message)),
    ...proxyAdvice(error, error.row.callRan, readOnly, identity),
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
      retry_can_help: failure.retryCanHelp,
      retry: failure.retry,
      ...(failure.retryAfterSeconds === undefined ? {} : { retry_after_seconds: failure.retryAfterSeconds }),
    },
  });
}

/**
 * @module middleware/inbound-edge
 * The edge: the only place an execute or version call's API Gateway event is read for the core.
 * It takes the headers the core needs, the source address, the function's remaining time, the
 * body and envelope `id` the `jsonBody` step returned and the caller key's policy `apiKeyAuth`
 * returned, and hands the core an {@link InboundCall}.
 */
import { IDEMPOTENCY_KEY_HEADER } from '../core/idempotency.ts';
import type { ExecuteCall, InboundCall, InboundCaller } from '../core/inbound-call.ts';
import type { ProxyContext } from '../core/request-facts.ts';
import type { KeyPolicy } from '../platform/key-policy.ts';
import type { OAuthCaller } from '../protocol/oauth/resource-server.ts';
import type { BodyRead } from './json-body.ts';
import { responseEncodingOf } from './response-shaping.ts';
import type { ProxyEvent } from './types.ts';

/** Builds the core's view of one call. API Gateway (and the local server) lower-case header names. */
export function toInboundCall(
  event: ProxyEvent,
  context: ProxyContext,
  known: BodyRead & {
    readonly caller: string;
    readonly policy: KeyPolicy | undefined;
    readonly oauth?: OAuthCaller | undefined;
  },
): InboundCall {
  const headers = event.headers ?? {};
  return {
    caller: callerOf(known.caller, known.oauth),
    body: known.body,
    envelopeId: known.envelopeId,
    keyPolicy: known.policy,
    presentedProxyKey: headers['x-api-key'],
    requestTimeout: headers['x-request-timeout'],
    responseEncoding: responseEncodingOf(event),
    sourceIp: event.requestContext?.http?.sourceIp,
    remainingMs:
      typeof context.getRemainingTimeInMillis === 'function'
        ? () => context.getRemainingTimeInMillis()
        : undefined,
    ...(context.answerLease ? { answerLease: context.answerLease } : {}),
  };
}

/** The caller: the key's (or identity's) name, and a token caller's person (issuer and `sub`). */
function callerOf(name: string, oauth: OAuthCaller | undefined): InboundCaller {
  return oauth?.subject === undefined
    ? { name }
    : { name, person: { issuer: oauth.issuer, subject: oauth.subject } };
}

/** An execute call: {@link toInboundCall}, the caller's key name and the `Idempotency-Key` header. */
export function toExecuteCall(
  event: ProxyEvent,
  context: ProxyContext,
  known: BodyRead & { readonly caller: string; readonly policy: KeyPolicy | undefined },
): ExecuteCall {
  return {
    ...toInboundCall(event, context, known),
    idempotencyKey: event.headers?.[IDEMPOTENCY_KEY_HEADER],
  };
}

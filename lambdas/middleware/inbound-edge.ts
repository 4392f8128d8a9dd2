/**
 * @module middleware/inbound-edge
 * The edge: the only place an execute or version call's API Gateway event is read for the core.
 * It takes the headers the core needs, the source address, the function's remaining time, the
 * body and envelope `id` the `jsonBody` step returned and the caller key's name and policy
 * `apiKeyAuth` returned, and hands the core an {@link InboundCall}.
 */
import { type ExecuteCall, IDEMPOTENCY_KEY_HEADER, type InboundCall } from '../core/inbound-call.ts';
import type { Observed, ProxyContext } from '../core/request-facts.ts';
import type { KeyPolicy } from '../platform/key-policy.ts';
import type { BodyRead } from './json-body.ts';
import { responseEncodingOf } from './response-shaping.ts';
import type { ProxyEvent } from './types.ts';

/**
 * Builds the core's view of one call. API Gateway (and the local server) lower-case header names.
 * The trace and the store meter are observe's (`Observed`: a chain's steps know them).
 */
export function toInboundCall(
  event: ProxyEvent,
  context: ProxyContext,
  known: BodyRead & {
    readonly callerName: string;
    readonly policy: KeyPolicy | undefined;
  } & Partial<Observed>,
): InboundCall {
  const headers = event.headers ?? {};
  return {
    body: known.body,
    identity: { kind: 'key', name: known.callerName },
    envelopeId: known.envelopeId,
    keyPolicy: known.policy,
    presentedProxyKey: headers['x-api-key'],
    requestTimeout: headers['x-request-timeout'],
    responseEncoding: responseEncodingOf(event),
    sourceIp: event.requestContext?.http?.sourceIp,
    requestId: event.requestContext?.requestId,
    trace: known.trace,
    storeMeter: known.storeMeter,
    remainingMs:
      typeof context.getRemainingTimeInMillis === 'function'
        ? () => context.getRemainingTimeInMillis()
        : undefined,
    ...(context.answerLease ? { answerLease: context.answerLease } : {}),
  };
}

/** An execute call: {@link toInboundCall} and the `Idempotency-Key` header. */
export function toExecuteCall(
  event: ProxyEvent,
  context: ProxyContext,
  known: BodyRead & {
    readonly callerName: string;
    readonly policy: KeyPolicy | undefined;
  } & Partial<Observed>,
): ExecuteCall {
  // The header added to the call just built, not a spread of it into a new object: this runs on
  // every execute call (the handler overhead's budget, BENCHMARKS.md).
  const call: { -readonly [K in keyof ExecuteCall]: ExecuteCall[K] } = toInboundCall(
    event,
    context,
    known,
  ) as ExecuteCall;
  call.idempotencyKey = event.headers?.[IDEMPOTENCY_KEY_HEADER];
  return call;
}

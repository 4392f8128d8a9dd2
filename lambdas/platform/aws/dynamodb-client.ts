/**
 * @module platform/aws/dynamodb-client
 * A small client of DynamoDB's JSON protocol (`X-Amz-Target: DynamoDB_20120810.<Operation>`,
 * `application/x-amz-json-1.0`), signed with SigV4 (`platform/aws/aws-sigv4.ts`) over Node's
 * `http`/`https` with a kept-alive connection: the store of `platform/state/state-store-dynamodb.ts`
 * needs three operations, and `@aws-sdk/client-dynamodb` bundles to about 530 KB and costs its
 * import on the first call (docs/design.md, "The proxy's state", has the numbers).
 *
 * At most {@link MAX_ATTEMPTS} attempts, with jittered back-off, within the call's time budget:
 * throttling is always retried (DynamoDB did nothing); a 5xx or a lost answer (connect, timeout,
 * broken answer) only when the caller says a second send is safe (`retrySafe`: a write whose
 * condition makes a second send harmless), never for a counter's `ADD`. What is still failing
 * after the last attempt is a {@link DynamoDbUnavailableError}; DynamoDB's own refusals of a
 * request (a condition that did not hold, an invalid request, a missing table or grant) come back
 * at once as {@link DynamoDbRefusal} with the exception's short name and the item returned with it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { http, https } from '../node-http.ts';
import { type AwsCredentials, signRequest } from './aws-sigv4.ts';

/** A DynamoDB attribute value, as the JSON protocol spells it (the kinds the store uses). */
export type AttributeValue =
  | { readonly S: string }
  | { readonly N: string }
  | { readonly B: string }
  | { readonly BOOL: boolean };

export type Item = Readonly<Record<string, AttributeValue>>;

/** The clock of the retries: tests pass their own to check the budget without timing. */
export interface RetryClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export interface DynamoDbClientOptions {
  /** The region's endpoint ({@link regionalEndpoint}) unless one is given (DynamoDB Local; a path is kept). */
  readonly endpoint?: string | undefined;
  readonly region: string;
  readonly credentials: AwsCredentials;
  /** Limit on a connection attempt. */
  readonly connectTimeoutMs?: number;
  /** Limit on one attempt, connection included. */
  readonly requestTimeoutMs?: number;
  /** Limit on a whole call, every attempt and back-off included. */
  readonly budgetMs?: number;
  readonly clock?: RetryClock;
}

/** DynamoDB refused the request: a condition did not hold, or the request was invalid. */
export class DynamoDbRefusal extends Error {
  override readonly name = 'DynamoDbRefusal';
  constructor(
    /** The exception's short name, e.g. `ConditionalCheckFailedException`. */
    readonly type: string,
    message: string,
    /** The item DynamoDB returned with the refusal (`ReturnValuesOnConditionCheckFailure`). */
    readonly item: Item | undefined,
  ) {
    super(`DynamoDB ${type}: ${message}`);
  }
}

/** No answer after the last attempt (unreachable, slow, throttled, failing): nothing is known of what DynamoDB did. */
export class DynamoDbUnavailableError extends Error {
  override readonly name = 'DynamoDbUnavailableError';
}

/** Exceptions that say DynamoDB turned the request away for load: it did nothing, so it is always retried. */
const THROTTLING_TYPES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'LimitExceededException',
]);

/** Attempts of one call at most (the first included). */
export const MAX_ATTEMPTS = 3;
/** Back-off before attempt n+1: a random time up to `BACKOFF_BASE_MS * 2^n` ("full jitter"). */
const BACKOFF_BASE_MS = 25;
const DEFAULT_CONNECT_TIMEOUT_MS = 1_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 2_500;
const DEFAULT_BUDGET_MS = 2_500;
/** Answers of the store's operations are small (one item of at most 400 KB, base64 in JSON). */
const MAX_ANSWER_BYTES = 1024 * 1024;

const SYSTEM_CLOCK: RetryClock = { now: Date.now, sleep: (ms) => sleep(ms) };

/** The DNS suffix of a region's partition: China's regions are not under `amazonaws.com`. */
const PARTITION_SUFFIXES: readonly (readonly [RegExp, string])[] = [
  [/^cn-\w+-\d+$/, 'amazonaws.com.cn'],
  [/^us-iso-\w+-\d+$/, 'c2s.ic.gov'],
  [/^us-isob-\w+-\d+$/, 'sc2s.sgov.gov'],
];

/** DynamoDB's endpoint in `region`, in its partition's domain. */
export function regionalEndpoint(region: string): string {
  const suffix = PARTITION_SUFFIXES.find(([pattern]) => pattern.test(region))?.[1] ?? 'amazonaws.com';
  return `https://dynamodb.${region}.${suffix}`;
}

export interface SendOptions {
  /** A second send after a 5xx or a lost answer is safe (a token-conditional write). */
  readonly retrySafe?: boolean;
  /** A shorter limit on this call than the client's (every attempt and back-off included). */
  readonly budgetMs?: number;
}

export interface DynamoDbClient {
  /** Sends one operation; resolves with its JSON answer. */
  send(
    operation: string,
    input: Record<string, unknown>,
    options?: SendOptions,
  ): Promise<Record<string, unknown>>;
}

/** The exception's short name from `__type` (`com.amazonaws.dynamodb.v20120810#Name`). */
function exceptionType(answer: Record<string, unknown>): string {
  const type = typeof answer.__type === 'string' ? answer.__type : 'UnknownError';
  return type.slice(type.lastIndexOf('#') + 1);
}

/** What one attempt came to: an answer, a refusal, or a failure that may be retried. */
type AttemptOutcome =
  | { readonly answer: Record<string, unknown> }
  | { readonly refusal: DynamoDbRefusal }
  | { readonly failed: string; readonly throttled: boolean; readonly cause?: unknown };

/** An HTTP answer read: the outcome of its attempt. */
function outcomeOf(status: number, text: string): AttemptOutcome {
  let answer: Record<string, unknown>;
  try {
    answer = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { failed: `HTTP ${status}, not a JSON answer`, throttled: false };
  }
  if (status === 200) return { answer };
  const type = exceptionType(answer);
  if (THROTTLING_TYPES.has(type)) return { failed: `HTTP ${status} ${type}`, throttled: true };
  if (status >= 500) return { failed: `HTTP ${status} ${type}`, throttled: false };
  const message =
    typeof answer.message === 'string'
      ? answer.message
      : typeof answer.Message === 'string'
        ? answer.Message
        : '';
  return { refusal: new DynamoDbRefusal(type, message, answer.Item as Item | undefined) };
}

type Exchange = (operation: string, body: string, timeoutMs: number) => Promise<AttemptOutcome>;

/** One signed POST to the endpoint, within `timeoutMs`; never rejects. */
function exchangeWith(options: DynamoDbClientOptions, endpoint: URL): Exchange {
  const secure = endpoint.protocol === 'https:';
  const agent = secure
    ? new (https().Agent)({ keepAlive: true, maxSockets: 8 })
    : new http.Agent({ keepAlive: true, maxSockets: 8 });
  const send = secure ? https().request : http.request;
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const path = endpoint.pathname || '/';
  return (operation, body, timeoutMs) =>
    new Promise((resolve) => {
      const headers = signRequest({
        host: endpoint.host,
        path,
        region: options.region,
        service: 'dynamodb',
        headers: {
          'content-type': 'application/x-amz-json-1.0',
          'x-amz-target': `DynamoDB_20120810.${operation}`,
        },
        body,
        credentials: options.credentials,
      });
      const fail = (why: string, cause?: unknown): void => resolve({ failed: why, throttled: false, cause });
      const req = send(
        {
          protocol: endpoint.protocol,
          hostname: endpoint.hostname,
          port: endpoint.port || (secure ? 443 : 80),
          path,
          method: 'POST',
          agent,
          headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_ANSWER_BYTES) {
              req.destroy();
              fail('answer too large');
              return;
            }
            chunks.push(chunk);
          });
          res.on('end', () =>
            resolve(outcomeOf(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'))),
          );
          res.on('error', (error) => fail('the answer broke off', error));
        },
      );
      const overall = setTimeout(() => {
        req.destroy();
        fail(`no answer within ${timeoutMs} ms`);
      }, timeoutMs);
      req.on('socket', (socket) => {
        if (!socket.connecting) return;
        const connectTimer = setTimeout(
          () => {
            req.destroy();
            fail(`no connection within ${connectTimeoutMs} ms`);
          },
          Math.min(connectTimeoutMs, timeoutMs),
        );
        socket.once('connect', () => clearTimeout(connectTimer));
        socket.once('close', () => clearTimeout(connectTimer));
      });
      req.on('close', () => clearTimeout(overall));
      req.on('error', (error: NodeJS.ErrnoException) => fail(error.code ?? error.message, error));
      req.end(body);
    });
}

export function createDynamoDbClient(options: DynamoDbClientOptions): DynamoDbClient {
  const endpoint = new URL(options.endpoint ?? regionalEndpoint(options.region));
  const exchange = exchangeWith(options, endpoint);
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const budgetMs = options.budgetMs ?? DEFAULT_BUDGET_MS;
  const clock = options.clock ?? SYSTEM_CLOCK;

  return {
    async send(operation, input, sendOptions = {}) {
      const body = JSON.stringify(input);
      const deadline = clock.now() + Math.min(budgetMs, sendOptions.budgetMs ?? budgetMs);
      for (let attempt = 1; ; attempt += 1) {
        const timeoutMs = Math.max(1, Math.min(requestTimeoutMs, deadline - clock.now()));
        const outcome = await exchange(operation, body, timeoutMs);
        if ('answer' in outcome) return outcome.answer;
        if ('refusal' in outcome) throw outcome.refusal;
        const retryable = outcome.throttled || sendOptions.retrySafe === true;
        const backoff = Math.random() * BACKOFF_BASE_MS * 2 ** attempt;
        if (!retryable || attempt >= MAX_ATTEMPTS || clock.now() + backoff >= deadline) {
          throw new DynamoDbUnavailableError(
            `DynamoDB ${operation}: ${outcome.failed} (attempt ${attempt} of at most ${MAX_ATTEMPTS})`,
            { cause: outcome.cause },
          );
        }
        await clock.sleep(backoff);
      }
    },
  };
}

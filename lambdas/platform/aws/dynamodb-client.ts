/**
 * @module platform/aws/dynamodb-client
 * A small client of DynamoDB's JSON protocol (`X-Amz-Target: DynamoDB_20120810.<Operation>`,
 * `application/x-amz-json-1.0`), signed with SigV4 (`platform/aws/aws-sigv4.ts`) over Node's
 * `http`/`https` with a kept-alive connection: the store of `platform/state/state-store-dynamodb.ts`
 * needs four operations, and `@aws-sdk/client-dynamodb` bundles to about 530 KB and costs its
 * import on the first call (docs/design.md, "The proxy's state", has the numbers).
 *
 * Every failure to get an answer (connect, timeout, a 5xx, throttling, a refused signature) is a
 * {@link StoreUnavailableError}: the callers only need to know that the store could not answer.
 * DynamoDB's own refusals of a request (a condition that did not hold) come back as
 * {@link DynamoDbRefusal} with the exception's short name and the item returned with it.
 */
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { StoreUnavailableError } from '../state/state-store.ts';
import { type AwsCredentials, signRequest } from './aws-sigv4.ts';

/** A DynamoDB attribute value, as the JSON protocol spells it (the kinds the store uses). */
export type AttributeValue =
  | { readonly S: string }
  | { readonly N: string }
  | { readonly B: string }
  | { readonly BOOL: boolean };

export type Item = Readonly<Record<string, AttributeValue>>;

export interface DynamoDbClientOptions {
  /** `https://dynamodb.<region>.amazonaws.com` unless an endpoint is given (DynamoDB Local). */
  readonly endpoint?: string | undefined;
  readonly region: string;
  readonly credentials: AwsCredentials;
  /** Limit on a connection attempt. */
  readonly connectTimeoutMs?: number;
  /** Limit on the whole exchange, connection included. */
  readonly requestTimeoutMs?: number;
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

/** Exceptions that say the service is busy or failing, not that the request is wrong. */
const UNAVAILABLE_TYPES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'LimitExceededException',
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'AccessDeniedException',
  'ResourceNotFoundException',
  'MissingAuthenticationTokenException',
  'ExpiredTokenException',
]);

const DEFAULT_CONNECT_TIMEOUT_MS = 1_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 2_500;
/** Answers of the store's operations are small (one item of at most 400 KB, base64 in JSON). */
const MAX_ANSWER_BYTES = 1024 * 1024;

export interface DynamoDbClient {
  /** Sends one operation; resolves with its JSON answer. */
  send(operation: string, input: Record<string, unknown>): Promise<Record<string, unknown>>;
}

/** The exception's short name from `__type` (`com.amazonaws.dynamodb.v20120810#Name`). */
function exceptionType(answer: Record<string, unknown>): string {
  const type = typeof answer.__type === 'string' ? answer.__type : 'UnknownError';
  return type.slice(type.lastIndexOf('#') + 1);
}

export function createDynamoDbClient(options: DynamoDbClientOptions): DynamoDbClient {
  const endpoint = new URL(options.endpoint ?? `https://dynamodb.${options.region}.amazonaws.com`);
  const secure = endpoint.protocol === 'https:';
  const agent = secure
    ? new HttpsAgent({ keepAlive: true, maxSockets: 8 })
    : new HttpAgent({ keepAlive: true, maxSockets: 8 });
  const send = secure ? httpsRequest : httpRequest;
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const path = endpoint.pathname || '/';

  const exchange = (operation: string, body: string): Promise<{ status: number; text: string }> =>
    new Promise((resolve, reject) => {
      const headers = signRequest({
        host: endpoint.host,
        region: options.region,
        service: 'dynamodb',
        headers: {
          'content-type': 'application/x-amz-json-1.0',
          'x-amz-target': `DynamoDB_20120810.${operation}`,
        },
        body,
        credentials: options.credentials,
      });
      const fail = (why: string, cause?: unknown): void =>
        reject(new StoreUnavailableError(`DynamoDB ${operation}: ${why}`, { cause }));
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
            resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
          );
          res.on('error', (error) => fail('the answer broke off', error));
        },
      );
      const overall = setTimeout(() => {
        req.destroy();
        fail(`no answer within ${requestTimeoutMs} ms`);
      }, requestTimeoutMs);
      req.on('socket', (socket) => {
        if (!socket.connecting) return;
        const connectTimer = setTimeout(() => {
          req.destroy();
          fail(`no connection within ${connectTimeoutMs} ms`);
        }, connectTimeoutMs);
        socket.once('connect', () => clearTimeout(connectTimer));
        socket.once('close', () => clearTimeout(connectTimer));
      });
      req.on('close', () => clearTimeout(overall));
      req.on('error', (error: NodeJS.ErrnoException) => fail(error.code ?? error.message, error));
      req.end(body);
    });

  return {
    async send(operation, input) {
      const { status, text } = await exchange(operation, JSON.stringify(input));
      let answer: Record<string, unknown>;
      try {
        answer = JSON.parse(text) as Record<string, unknown>;
      } catch {
        throw new StoreUnavailableError(`DynamoDB ${operation}: HTTP ${status}, not a JSON answer`);
      }
      if (status === 200) return answer;
      const type = exceptionType(answer);
      const message =
        typeof answer.message === 'string'
          ? answer.message
          : typeof answer.Message === 'string'
            ? answer.Message
            : '';
      if (status >= 500 || UNAVAILABLE_TYPES.has(type)) {
        throw new StoreUnavailableError(`DynamoDB ${operation}: HTTP ${status} ${type}`);
      }
      throw new DynamoDbRefusal(type, message, answer.Item as Item | undefined);
    },
  };
}

/**
 * @module platform/state/state-store-dynamodb
 * The store port (`platform/state/state-store.ts`) on the stack's DynamoDB table, over the small JSON
 * protocol client (`platform/aws/dynamodb-client.ts`). Loaded on the first call that needs the store.
 *
 * One table, partition key `pk` (a string, prefixed by the item's kind), TTL on `expires_at`
 * (epoch seconds). Each operation is one request: a conditional `PutItem`, `UpdateItem` or
 * `DeleteItem` whose condition includes the expiry (TTL deletes late), and a refused condition
 * returns the item that refused it (`ReturnValuesOnConditionCheckFailure: ALL_OLD`), so a replay
 * costs one request, not a write and a read.
 *
 * Attributes: `st` (attempt state), `fp` (fingerprint hash), `tok` (the attempt's or lease's
 * token), `lease` (epoch ms), `ans` (the stored answer, binary), `n` (a counter), `snt` (marked
 * sent), `aud` (the call's audit record id).
 */
import {
  type DynamoDbClient,
  DynamoDbRefusal,
  DynamoDbUnavailableError,
  type Item,
} from '../aws/dynamodb-client.ts';
import {
  type AttemptBegun,
  type AttemptStart,
  type CounterResult,
  type CounterStep,
  type IdempotencyRecord,
  MAX_STORED_ANSWER_BYTES,
  PARTITION_KEY,
  type SlotLease,
  STORE_KEY_PREFIX,
  type StateStore,
  type StoreOperation,
  StoreUnavailableError,
  slotKey,
  TTL_ATTRIBUTE,
} from './state-store.ts';
import { type StateClientConfig, stateTableClient } from './state-table-client.ts';

const CONDITION_FAILED = 'ConditionalCheckFailedException';

const S = (value: string) => ({ S: value });
const N = (value: number) => ({ N: String(value) });

function text(item: Item, name: string): string | undefined {
  const value = item[name];
  return value && 'S' in value ? value.S : undefined;
}

function number(item: Item, name: string): number | undefined {
  const value = item[name];
  return value && 'N' in value ? Number(value.N) : undefined;
}

/** The record an item holds; `undefined` when it is not an attempt's record. */
export function recordOf(item: Item): IdempotencyRecord | undefined {
  const state = text(item, 'st');
  const fingerprint = text(item, 'fp');
  const token = text(item, 'tok');
  if ((state !== 'in-progress' && state !== 'done') || fingerprint === undefined || token === undefined) {
    return undefined;
  }
  const answer = item.ans;
  return {
    state,
    fingerprint,
    token,
    leaseUntil: number(item, 'lease') ?? 0,
    expiresAt: number(item, TTL_ATTRIBUTE) ?? 0,
    ...(item.snt && 'BOOL' in item.snt ? { sent: item.snt.BOOL === true } : {}),
    ...(item.aud && 'S' in item.aud ? { auditId: item.aud.S } : {}),
    ...(answer && 'B' in answer ? { answer: new Uint8Array(Buffer.from(answer.B, 'base64')) } : {}),
  };
}

/** Whether `error` is DynamoDB refusing a condition. */
function conditionFailed(error: unknown): error is DynamoDbRefusal {
  return error instanceof DynamoDbRefusal && error.type === CONDITION_FAILED;
}

/** Any other refusal (an invalid request: a bug, or a table of another shape) is the store failing. */
function unavailable(error: unknown): Error {
  if (error instanceof StoreUnavailableError) return error;
  return new StoreUnavailableError(error instanceof Error ? error.message : String(error), { cause: error });
}

/**
 * After DynamoDB failed to answer (every attempt), how long this instance does not ask it: every
 * operation fails at once (the limits fail open, a keyed write gets -32004), so a table that does
 * not answer does not add the client's time budget to every call while it is down.
 */
export const STORE_DOWN_PAUSE_MS = 5_000;

/** The token-conditional writes, whose second send is safe: the client may resend them after a 5xx or a lost answer. */
const RETRY_SAFE = Object.freeze({ retrySafe: true });

export class DynamoDbStateStore implements StateStore {
  readonly kind = 'dynamodb';
  readonly maxAnswerBytes = MAX_STORED_ANSWER_BYTES;
  /** Until when (epoch ms) the store is known down and not asked. */
  #downUntil = 0;

  constructor(
    private readonly client: DynamoDbClient,
    private readonly table: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** The store of the configuration, over {@link stateTableClient}. */
  static fromConfig(
    config: StateClientConfig,
    table: string,
    endpoint: string | undefined,
  ): DynamoDbStateStore {
    return new DynamoDbStateStore(stateTableClient(config, endpoint), table);
  }

  async #send(
    operation: StoreOperation,
    input: Record<string, unknown>,
    options: { readonly retrySafe?: boolean } = {},
  ): Promise<Record<string, unknown>> {
    const now = this.now();
    if (now < this.#downUntil) {
      throw new StoreUnavailableError(
        `DynamoDB did not answer less than ${STORE_DOWN_PAUSE_MS} ms ago: not asked again until then`,
      );
    }
    try {
      return await this.client.send(operation, { TableName: this.table, ...input }, options);
    } catch (error) {
      if (error instanceof DynamoDbUnavailableError) this.#downUntil = this.now() + STORE_DOWN_PAUSE_MS;
      throw error;
    }
  }

  async #put(
    item: Item,
    condition: string,
    values: Item,
    options: { readonly retrySafe?: boolean } = {},
  ): Promise<{ refusedBy?: Item }> {
    try {
      await this.#send(
        'PutItem',
        {
          Item: item,
          ConditionExpression: condition,
          ExpressionAttributeValues: values,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
        options,
      );
      return {};
    } catch (error) {
      if (conditionFailed(error)) return { refusedBy: error.item ?? {} };
      throw unavailable(error);
    }
  }

  /** A conditional `DeleteItem` by token; whether it held. */
  async #deleteOwn(pk: string, token: string): Promise<boolean> {
    try {
      await this.#send(
        'DeleteItem',
        {
          Key: { [PARTITION_KEY]: S(pk) },
          ConditionExpression: 'tok = :tok',
          ExpressionAttributeValues: { ':tok': S(token) },
        },
        RETRY_SAFE,
      );
      return true;
    } catch (error) {
      if (conditionFailed(error)) return false;
      throw unavailable(error);
    }
  }

  async beginAttempt(attempt: AttemptStart, now: number): Promise<AttemptBegun> {
    const item: Item = {
      [PARTITION_KEY]: S(STORE_KEY_PREFIX.attempt + attempt.key),
      st: S('in-progress'),
      fp: S(attempt.fingerprint),
      tok: S(attempt.token),
      lease: N(attempt.leaseUntil),
      snt: { BOOL: false },
      [TTL_ATTRIBUTE]: N(attempt.expiresAt),
      ...(attempt.auditId === undefined ? {} : { aud: S(attempt.auditId) }),
    };
    // Safe to send again: when the first send was applied and its answer lost, the refusal of the
    // second carries this attempt's own token, which says it was. A claim of the same request
    // never marked sent whose lease has passed is taken over (a record without `snt`, written
    // before the mark, never is; another request with the key is still -32011).
    const outcome = await this.#put(
      item,
      `attribute_not_exists(${PARTITION_KEY}) OR ${TTL_ATTRIBUTE} < :now OR (st = :progress AND lease < :nowMs AND snt = :no AND fp = :fp)`,
      {
        ':now': N(Math.floor(now / 1000)),
        ':nowMs': N(now),
        ':fp': S(attempt.fingerprint),
        ':progress': S('in-progress'),
        ':no': { BOOL: false },
      },
      RETRY_SAFE,
    );
    if (outcome.refusedBy === undefined) return { begun: true };
    const existing = recordOf(outcome.refusedBy);
    if (existing === undefined)
      throw new StoreUnavailableError('the table holds an item of another shape under this key');
    if (existing.token === attempt.token) return { begun: true };
    return { begun: false, existing };
  }

  async completeAttempt(key: string, token: string, answer: Uint8Array, expiresAt: number): Promise<boolean> {
    if (answer.byteLength > this.maxAnswerBytes) {
      throw new RangeError(`answer of ${answer.byteLength} bytes is over the store's limit`);
    }
    try {
      await this.#send(
        'UpdateItem',
        {
          Key: { [PARTITION_KEY]: S(STORE_KEY_PREFIX.attempt + key) },
          UpdateExpression: `SET st = :done, ans = :ans, ${TTL_ATTRIBUTE} = :exp REMOVE lease`,
          ConditionExpression: 'tok = :tok',
          ExpressionAttributeValues: {
            ':done': S('done'),
            ':ans': {
              B: Buffer.from(answer.buffer, answer.byteOffset, answer.byteLength).toString('base64'),
            },
            ':exp': N(expiresAt),
            ':tok': S(token),
          },
        },
        RETRY_SAFE,
      );
      return true;
    } catch (error) {
      if (conditionFailed(error)) return false;
      throw unavailable(error);
    }
  }

  abandonAttempt(key: string, token: string): Promise<boolean> {
    return this.#deleteOwn(STORE_KEY_PREFIX.attempt + key, token);
  }

  async markSent(key: string, token: string): Promise<boolean> {
    try {
      await this.#send(
        'UpdateItem',
        {
          Key: { [PARTITION_KEY]: S(STORE_KEY_PREFIX.attempt + key) },
          UpdateExpression: 'SET snt = :yes',
          ConditionExpression: 'tok = :tok AND st = :progress',
          ExpressionAttributeValues: {
            ':yes': { BOOL: true },
            ':tok': S(token),
            ':progress': S('in-progress'),
          },
        },
        RETRY_SAFE,
      );
      return true;
    } catch (error) {
      if (conditionFailed(error)) return false;
      throw unavailable(error);
    }
  }

  async countRequest(step: CounterStep): Promise<CounterResult> {
    try {
      const answer = await this.#send('UpdateItem', {
        Key: { [PARTITION_KEY]: S(STORE_KEY_PREFIX.counter + step.key) },
        UpdateExpression: `ADD n :one SET ${TTL_ATTRIBUTE} = if_not_exists(${TTL_ATTRIBUTE}, :exp)`,
        // The window is part of the key, so a counter past its expiry is never counted again.
        ConditionExpression: `attribute_not_exists(${PARTITION_KEY}) OR n < :limit`,
        ExpressionAttributeValues: { ':one': N(1), ':exp': N(step.expiresAt), ':limit': N(step.limit) },
        ReturnValues: 'UPDATED_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      const attributes = (answer.Attributes ?? {}) as Item;
      return { counted: true, count: number(attributes, 'n') ?? 1 };
    } catch (error) {
      if (conditionFailed(error))
        return { counted: false, count: number(error.item ?? {}, 'n') ?? step.limit };
      throw unavailable(error);
    }
  }

  async uncountRequest(key: string, now: number): Promise<boolean> {
    try {
      await this.#send('UpdateItem', {
        Key: { [PARTITION_KEY]: S(STORE_KEY_PREFIX.counter + key) },
        UpdateExpression: 'ADD n :minus',
        // Never below 0, never on a counter that does not exist (or has expired).
        ConditionExpression: `n > :zero AND ${TTL_ATTRIBUTE} >= :now`,
        ExpressionAttributeValues: { ':minus': N(-1), ':zero': N(0), ':now': N(Math.floor(now / 1000)) },
      });
      return true;
    } catch (error) {
      if (conditionFailed(error)) return false;
      throw unavailable(error);
    }
  }

  async acquireSlot(lease: SlotLease, now: number): Promise<boolean> {
    const outcome = await this.#put(
      {
        [PARTITION_KEY]: S(slotKey(lease.key, lease.slot)),
        tok: S(lease.token),
        lease: N(lease.leaseUntil),
        [TTL_ATTRIBUTE]: N(Math.ceil(lease.leaseUntil / 1000)),
      },
      `attribute_not_exists(${PARTITION_KEY}) OR lease < :now`,
      { ':now': N(now) },
    );
    return outcome.refusedBy === undefined;
  }

  releaseSlot(key: string, slot: number, token: string): Promise<boolean> {
    return this.#deleteOwn(slotKey(key, slot), token);
  }

  async markOnce(key: string, expiresAt: number, now: number): Promise<boolean> {
    const item: Item = { [PARTITION_KEY]: S(STORE_KEY_PREFIX.once + key), [TTL_ATTRIBUTE]: N(expiresAt) };
    // Not retried on an unknown outcome: a mark that was made and whose answer was lost would read
    // as "used" on the second write; the caller answers the store's failure instead (nothing runs).
    const outcome = await this.#put(
      item,
      `attribute_not_exists(${PARTITION_KEY}) OR ${TTL_ATTRIBUTE} < :now`,
      {
        ':now': N(Math.floor(now / 1000)),
      },
    );
    return outcome.refusedBy === undefined;
  }
}

/**
 * @module platform/state/table-write-check
 * The deploy's check that the functions can write their table (issue 45): with the functions' own
 * role and client ({@link stateTableClient}, SigV4 included), one item under the reserved
 * `check#` prefix is written, updated and deleted, the three operations the stack grants
 * (`STORE_OPERATIONS`). DynamoDB Local takes any signature and any grant, so only this run, in the
 * account, shows that the deployed role, region and table fit together; the stack runs it as a
 * CloudFormation trigger, and a failure fails (and rolls back) the deploy.
 *
 * A failure names the operation, the table and DynamoDB's reason (an exception's name and
 * message, which name a role or a table, never a credential). The item carries a TTL of
 * {@link CHECK_ITEM_TTL_SECONDS}: left behind by a check that failed after writing it, DynamoDB
 * removes it, and no other item kind can ever read it.
 */
import { randomUUID } from 'node:crypto';
import { type DynamoDbClient, DynamoDbRefusal, DynamoDbUnavailableError } from '../aws/dynamodb-client.ts';
import type { Config } from '../config.ts';
import { PARTITION_KEY, STORE_KEY_PREFIX, type StoreOperation, TTL_ATTRIBUTE } from './state-store.ts';
import { type StateClientConfig, stateTableClient } from './state-table-client.ts';

/** The check item's life, should the check fail before deleting it. */
export const CHECK_ITEM_TTL_SECONDS = 300;

/** What a likely cause of each DynamoDB refusal is, for the deploy's error message. */
const LIKELY_CAUSES: Readonly<Record<string, string>> = Object.freeze({
  AccessDeniedException: "the functions' role is not granted this operation on the table",
  ResourceNotFoundException: 'the table does not exist in this region',
  UnrecognizedClientException: 'the credentials are not valid in this region',
  ConditionalCheckFailedException: 'the check item was not where the check had just written it',
});

/** The check failed: `operation` on the table could not be made. */
export class StateTableCheckError extends Error {
  override readonly name = 'StateTableCheckError';
  constructor(
    readonly operation: StoreOperation | 'configuration',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** What a passed check did. */
export interface StateTableCheckResult {
  readonly table: string;
  /** The partition key of the item written and deleted. */
  readonly key: string;
  readonly operations: readonly StoreOperation[];
}

/** Why a call failed, in words that never hold a credential (the client's messages never do). */
function reasonOf(error: unknown): string {
  if (error instanceof DynamoDbRefusal) {
    const cause = LIKELY_CAUSES[error.type];
    return cause === undefined ? error.message : `${error.message} (${cause})`;
  }
  if (error instanceof DynamoDbUnavailableError) return `${error.message} (DynamoDB could not be reached)`;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * Writes, updates and deletes one item of `table` under a fresh `check#` key; resolves when all
 * three succeeded and the delete removed the item written. Throws {@link StateTableCheckError}
 * naming the first operation that failed.
 */
export async function checkStateTable(
  client: DynamoDbClient,
  table: string,
  now: number = Date.now(),
): Promise<StateTableCheckResult> {
  const key = `${STORE_KEY_PREFIX.check}${randomUUID()}`;
  const common = {
    TableName: table,
    ExpressionAttributeNames: { '#pk': PARTITION_KEY },
  };
  const steps: readonly (readonly [StoreOperation, Record<string, unknown>])[] = [
    [
      'PutItem',
      {
        ...common,
        Item: {
          [PARTITION_KEY]: { S: key },
          [TTL_ATTRIBUTE]: { N: String(Math.floor(now / 1000) + CHECK_ITEM_TTL_SECONDS) },
        },
        ConditionExpression: 'attribute_not_exists(#pk)',
      },
    ],
    [
      'UpdateItem',
      {
        ...common,
        Key: { [PARTITION_KEY]: { S: key } },
        UpdateExpression: 'SET #checked = :now',
        ConditionExpression: 'attribute_exists(#pk)',
        ExpressionAttributeNames: { ...common.ExpressionAttributeNames, '#checked': 'checked_at' },
        ExpressionAttributeValues: { ':now': { N: String(now) } },
      },
    ],
    [
      'DeleteItem',
      { ...common, Key: { [PARTITION_KEY]: { S: key } }, ConditionExpression: 'attribute_exists(#pk)' },
    ],
  ];
  for (const [operation, input] of steps) {
    try {
      await client.send(operation, input);
    } catch (error) {
      throw new StateTableCheckError(
        operation,
        `state table check: ${operation} on table ${table} failed: ${reasonOf(error)}`,
      );
    }
  }
  return { table, key, operations: steps.map(([operation]) => operation) };
}

/**
 * The check with the configuration's table, endpoint, region and credentials, as the functions
 * read them (`STATE_TABLE`, `AWS_REGION`, Lambda's credentials).
 */
export async function checkConfiguredStateTable(
  config: Pick<Config, 'stateTable' | 'dynamodbEndpoint'> & StateClientConfig,
  now: number = Date.now(),
): Promise<StateTableCheckResult> {
  if (!config.stateTable) {
    throw new StateTableCheckError('configuration', 'state table check: STATE_TABLE is not set');
  }
  let client: DynamoDbClient;
  try {
    client = stateTableClient(config, config.dynamodbEndpoint);
  } catch (error) {
    throw new StateTableCheckError('configuration', `state table check: ${reasonOf(error)}`);
  }
  return checkStateTable(client, config.stateTable, now);
}

/**
 * @module platform/brakes/brakes-store-dynamodb
 * The brakes item on the state table: `GetItem` with `ConsistentRead` (a brake written is read by
 * the next read, whatever the replica), and `PutItem` conditional on the version read, so two
 * operators' writes never lose one another. Attributes: `ver` (the version), `b` (the list, JSON).
 */
import { type DynamoDbClient, DynamoDbRefusal } from '../aws/dynamodb-client.ts';
import { PARTITION_KEY } from '../state/state-store.ts';
import { type StateClientConfig, stateTableClient } from '../state/state-table-client.ts';
import { type Brake, NO_BRAKES, parseBrakeList, type StoredBrakes } from './brakes.ts';
import { BRAKES_ITEM_KEY } from './brakes-item.ts';
import type { BrakesStore } from './brakes-source.ts';

/** One read's time budget, every attempt included: below the read's own limit (brakes-source.ts). */
const READ_BUDGET_MS = 900;

export class DynamoDbBrakesStore implements BrakesStore {
  constructor(
    private readonly client: DynamoDbClient,
    private readonly table: string,
  ) {}

  static fromConfig(
    config: StateClientConfig,
    table: string,
    endpoint: string | undefined,
  ): DynamoDbBrakesStore {
    return new DynamoDbBrakesStore(stateTableClient(config, endpoint), table);
  }

  async read(): Promise<StoredBrakes> {
    const answer = await this.client.send(
      'GetItem',
      { TableName: this.table, Key: { [PARTITION_KEY]: { S: BRAKES_ITEM_KEY } }, ConsistentRead: true },
      { retrySafe: true, budgetMs: READ_BUDGET_MS },
    );
    const item = answer.Item as Record<string, { S?: string; N?: string }> | undefined;
    if (item === undefined) return NO_BRAKES;
    const version = Number(item.ver?.N);
    if (!Number.isSafeInteger(version) || version < 1 || typeof item.b?.S !== 'string')
      throw new Error('the brakes item has no version or no list');
    return { version, brakes: parseBrakeList(item.b.S) };
  }

  async write(brakes: readonly Brake[], expected: number): Promise<boolean> {
    try {
      await this.client.send('PutItem', {
        TableName: this.table,
        Item: {
          [PARTITION_KEY]: { S: BRAKES_ITEM_KEY },
          ver: { N: String(expected + 1) },
          b: { S: JSON.stringify(brakes) },
        },
        ConditionExpression: expected === 0 ? `attribute_not_exists(${PARTITION_KEY})` : 'ver = :ver',
        ...(expected === 0 ? {} : { ExpressionAttributeValues: { ':ver': { N: String(expected) } } }),
      });
      return true;
    } catch (error) {
      if (error instanceof DynamoDbRefusal && error.type === 'ConditionalCheckFailedException') return false;
      throw error;
    }
  }
}

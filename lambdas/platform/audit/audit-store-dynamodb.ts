/**
 * @module platform/audit/audit-store-dynamodb
 * The audit's writes (`platform/audit/audit-store.ts` `AuditWriter`) on the stack's DynamoDB audit
 * table, over the small JSON protocol client (`platform/aws/dynamodb-client.ts`): the execute and
 * mcp functions', which the stack grants `PutItem` and `UpdateItem` only (the reads are
 * audit-reader-dynamodb.ts, the aux function's). Loaded on the first record.
 *
 * Items: a record under partition `t#<UTC day>#<shard>` and sort key `sk` = its `audit_id` (so a
 * time window reads with one strongly consistent Query per shard of the base table), with `actor`
 * (the `by-actor` index's partition), `st` (`pending` or `done`), `outcome`, `model`, `erp`, `db`,
 * the record's JSON in `rec`, and the TTL `expires_at`; a pointer item per ERP record a call named
 * or created under `r#<model>#<id>`, sorted by `audit_id`.
 *
 * Writes: `PutItem` where no item has the key (a pending record, a pointer), `UpdateItem` where no
 * item has it or its item is still `pending` (a record's end): a record is created once and
 * completed once, and nothing here deletes.
 */
import { type DynamoDbClient, DynamoDbRefusal, type Item } from '../aws/dynamodb-client.ts';
import { type StateClientConfig, stateTableClient } from '../state/state-table-client.ts';
import {
  AUDIT_TABLE,
  type AuditOperation,
  type AuditRecord,
  pointerPartition,
  recordPartition,
} from './audit-record.ts';
import { type AuditPointer, AuditStoreError, type AuditWriter } from './audit-store.ts';

const { partitionKey: PK, sortKey: SK, ttlAttribute: TTL, actorAttribute: ACTOR } = AUDIT_TABLE;
const S = (value: string) => ({ S: value });
const N = (value: number) => ({ N: String(value) });

/** The audit's own short time limit: a record's write fits the function's safety margin. */
export const AUDIT_CLIENT_TIMING = Object.freeze({ budgetMs: 1_500, requestTimeoutMs: 1_000 });
/** The audit table's client (the writer's and the reader's), with the audit's own short time limit. */
export function auditTableClient(config: StateClientConfig, endpoint: string | undefined): DynamoDbClient {
  return stateTableClient(config, endpoint, AUDIT_CLIENT_TIMING);
}

/** The end's limit when the call's pending record just failed: one short try. */
export const AUDIT_QUICK_BUDGET_MS = 400;

function conditionFailed(error: unknown): boolean {
  return error instanceof DynamoDbRefusal && error.type === 'ConditionalCheckFailedException';
}

function failed(error: unknown): AuditStoreError {
  if (error instanceof AuditStoreError) return error;
  return new AuditStoreError(error instanceof Error ? error.message : String(error), { cause: error });
}

/** The attributes of a record's item besides its key. */
function recordAttributes(
  record: AuditRecord,
  expiresAt: number,
): Record<string, { S: string } | { N: string }> {
  return {
    [ACTOR]: S(record.actor_id),
    st: S(record.outcome === 'pending' ? 'pending' : 'done'),
    outcome: S(record.outcome),
    erp: S(record.erp.host),
    db: S(record.erp.db),
    ...(record.model === undefined ? {} : { model: S(record.model) }),
    rec: S(JSON.stringify(record)),
    [TTL]: N(expiresAt),
  };
}

/** Whether the item a refused condition returned holds this very end of `record` (its own write, sent twice). */
function sameEnd(item: Item | undefined, record: AuditRecord): boolean {
  const held = item === undefined ? undefined : recordOfItem(item);
  return held !== undefined && JSON.stringify(held) === JSON.stringify(record);
}

/** The record an item holds; `undefined` for another kind of item or one that does not read. */
export function recordOfItem(item: Item): AuditRecord | undefined {
  const rec = item.rec;
  if (rec === undefined || !('S' in rec)) return undefined;
  try {
    const record = JSON.parse(rec.S) as AuditRecord;
    return record.schema === 1 && typeof record.audit_id === 'string' ? record : undefined;
  } catch {
    return undefined;
  }
}

export class DynamoDbAuditStore implements AuditWriter {
  readonly kind = 'dynamodb';

  constructor(
    private readonly client: DynamoDbClient,
    private readonly table: string,
  ) {}

  /** The store of the configuration ({@link auditTableClient}). */
  static fromConfig(
    config: StateClientConfig,
    table: string,
    endpoint: string | undefined,
  ): DynamoDbAuditStore {
    return new DynamoDbAuditStore(auditTableClient(config, endpoint), table);
  }

  #send(operation: AuditOperation, input: Record<string, unknown>, retrySafe = false, budgetMs?: number) {
    return this.client.send(
      operation,
      { TableName: this.table, ...input },
      { retrySafe, ...(budgetMs === undefined ? {} : { budgetMs }) },
    );
  }

  async create(record: AuditRecord, expiresAt: number): Promise<void> {
    try {
      // Safe to send again: a second send of an applied one is refused by its own condition.
      await this.#send(
        'PutItem',
        {
          Item: {
            [PK]: S(recordPartition(record.audit_id)),
            [SK]: S(record.audit_id),
            ...recordAttributes(record, expiresAt),
          },
          ConditionExpression: `attribute_not_exists(${PK})`,
        },
        true,
      );
    } catch (error) {
      // A lost answer of an applied first send: the record is there (its id is this call's own).
      if (conditionFailed(error)) return;
      throw failed(error);
    }
  }

  async finish(
    record: AuditRecord,
    expiresAt: number,
    options: { readonly quick?: boolean } = {},
  ): Promise<boolean> {
    const attributes = recordAttributes(record, expiresAt);
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ':pending': S('pending') };
    const sets = Object.entries(attributes).map(([name, value], index) => {
      names[`#a${index}`] = name;
      values[`:a${index}`] = value;
      return `#a${index} = :a${index}`;
    });
    try {
      await this.#send(
        'UpdateItem',
        {
          Key: { [PK]: S(recordPartition(record.audit_id)), [SK]: S(record.audit_id) },
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: `attribute_not_exists(${PK}) OR st = :pending`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
        true,
        options.quick === true ? AUDIT_QUICK_BUDGET_MS : undefined,
      );
      return true;
    } catch (error) {
      // A second send of an end already applied (its first answer lost) finds its own end: written.
      if (conditionFailed(error)) return sameEnd((error as DynamoDbRefusal).item, record);
      throw failed(error);
    }
  }

  async point(record: AuditRecord, pointers: readonly AuditPointer[], expiresAt: number): Promise<void> {
    const results = await Promise.allSettled(
      pointers.map((pointer) =>
        this.#send(
          'PutItem',
          {
            Item: {
              [PK]: S(pointerPartition(pointer.model, pointer.id)),
              [SK]: S(record.audit_id),
              erp: S(record.erp.host),
              db: S(record.erp.db),
              [TTL]: N(expiresAt),
            },
            ConditionExpression: `attribute_not_exists(${PK})`,
          },
          true,
        ),
      ),
    );
    const problem = results.find(
      (result): result is PromiseRejectedResult =>
        result.status === 'rejected' && !conditionFailed(result.reason),
    );
    if (problem !== undefined) throw failed(problem.reason);
  }
}

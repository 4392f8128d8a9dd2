/**
 * @module platform/audit/audit-reader-dynamodb
 * The audit's reads (`GET /_/audit`, platform/audit/audit-store.ts `AuditReader`) on the stack's
 * DynamoDB audit table: the aux function's alone, which the stack grants `Query`, `GetItem` and
 * `BatchGetItem` (the writers' module, audit-store-dynamodb.ts, has none of this). Loaded on the
 * first read. Item layout: audit-store-dynamodb.ts.
 *
 * Every filter is served by Queries, never a Scan: a time window by one Query per shard of each UTC
 * day (newest first, strongly consistent), `actor=` by the `by-actor` index, `record=` by the
 * record's pointer items and a `BatchGetItem` of the records they name.
 */
import type { DynamoDbClient, Item } from '../aws/dynamodb-client.ts';
import type { StateClientConfig } from '../state/state-table-client.ts';
import {
  AUDIT_SHARDS,
  AUDIT_TABLE,
  type AuditOperation,
  type AuditRecord,
  auditDay,
  auditIdTime,
  dayPartition,
  highestAuditId,
  lowestAuditId,
  pointerPartition,
  recordPartition,
} from './audit-record.ts';
import {
  type AuditPage,
  type AuditPointer,
  type AuditQuery,
  type AuditReader,
  AuditStoreError,
  type AuditView,
  type AuditWindowReader,
  matchesFilters,
} from './audit-store.ts';
import { auditTableClient, recordOfItem } from './audit-store-dynamodb.ts';

const { partitionKey: PK, sortKey: SK, actorAttribute: ACTOR } = AUDIT_TABLE;
const S = (value: string) => ({ S: value });

/** Queries one `list` makes at most; past them the page ends where the reading got to. */
export const MAX_QUERIES_PER_PAGE = 128;
/** Days one page walks back at most (a day is one Query per shard when it is quiet). */
export const MAX_DAYS_PER_PAGE = 31;
/**
 * Items one Query or BatchGetItem asks for: a record's JSON is at most 16 KB
 * (`AUDIT_RECORD_MAX_BYTES`), at most twice that once escaped in DynamoDB's answer, so an answer
 * of this many stays under the client's 1 MB.
 */
export const ITEMS_PER_READ = 25;

function failed(error: unknown): AuditStoreError {
  if (error instanceof AuditStoreError) return error;
  return new AuditStoreError(error instanceof Error ? error.message : String(error), { cause: error });
}

function sortKeyOf(item: Item | undefined): string | undefined {
  const value = item?.[SK];
  return value !== undefined && 'S' in value ? value.S : undefined;
}

/** One Query's page: the items and where the next starts. */
interface QueryPage {
  readonly items: readonly Item[];
  readonly lastKey: Item | undefined;
}

/** A Query of one partition (of the table or the actor index), newest first, between two ids. */
interface Stream {
  readonly index?: string;
  readonly partitionName: string;
  readonly partition: string;
  lastKey: Item | undefined;
  done: boolean;
  /** The lowest sort key read so far. */
  frontier: string | undefined;
  readonly found: AuditRecord[];
}

export class DynamoDbAuditReader implements AuditReader, AuditWindowReader {
  readonly kind = 'dynamodb';

  constructor(
    private readonly client: DynamoDbClient,
    private readonly table: string,
  ) {}

  /** The reader of the configuration (audit-store-dynamodb.ts `auditTableClient`). */
  static fromConfig(
    config: StateClientConfig,
    table: string,
    endpoint: string | undefined,
  ): DynamoDbAuditReader {
    return new DynamoDbAuditReader(auditTableClient(config, endpoint), table);
  }

  #send(operation: AuditOperation, input: Record<string, unknown>) {
    // Reads: a second send is always safe.
    return this.client.send(operation, { TableName: this.table, ...input }, { retrySafe: true });
  }

  async list(query: AuditQuery, view: AuditView): Promise<AuditPage> {
    // A cursor from a page before a later `since`: nothing is between them.
    const bounds = this.#bounds(query);
    if (bounds.hi < bounds.lo) return { records: [] };
    try {
      if (query.record !== undefined) return await this.#listByRecord(query, view);
      if (query.actor !== undefined) return await this.#listByActor(query, view);
      return await this.#listByTime(query, view);
    } catch (error) {
      throw failed(error);
    }
  }

  /** The ids between which a page reads: `since`, and `until` or the cursor (which is left out). */
  #bounds(query: AuditQuery): { readonly lo: string; readonly hi: string } {
    const top = highestAuditId(query.until);
    return {
      lo: lowestAuditId(query.since),
      hi: query.before !== undefined && query.before < top ? query.before : top,
    };
  }

  /**
   * A window, whole: one strongly consistent Query of the base table per shard of its day (never the
   * index, which can miss a record just written), oldest first, every page read.
   */
  async readWindow(start: number, end: number): Promise<AuditRecord[]> {
    const day = auditDay(start);
    if (end <= start || auditDay(end - 1) !== day) {
      throw new AuditStoreError('a window to seal lies within one UTC day');
    }
    const [lo, hi] = [lowestAuditId(start), highestAuditId(end - 1)];
    try {
      const shards = await Promise.all(
        Array.from({ length: AUDIT_SHARDS }, async (_, shard) => {
          const found: AuditRecord[] = [];
          let lastKey: Item | undefined;
          do {
            const answer = await this.#send('Query', {
              KeyConditionExpression: '#p = :p AND #s BETWEEN :lo AND :hi',
              ExpressionAttributeNames: { '#p': PK, '#s': SK },
              ExpressionAttributeValues: { ':p': S(dayPartition(day, shard)), ':lo': S(lo), ':hi': S(hi) },
              ScanIndexForward: true,
              ConsistentRead: true,
              Limit: ITEMS_PER_READ,
              ...(lastKey === undefined ? {} : { ExclusiveStartKey: lastKey }),
            });
            for (const item of (answer.Items as Item[] | undefined) ?? []) {
              const record = recordOfItem(item);
              if (record === undefined)
                throw new AuditStoreError(`an item of ${day} does not read as a record`);
              found.push(record);
            }
            lastKey = answer.LastEvaluatedKey as Item | undefined;
          } while (lastKey !== undefined);
          return found;
        }),
      );
      return shards.flat().sort((a, b) => (a.audit_id < b.audit_id ? -1 : a.audit_id > b.audit_id ? 1 : 0));
    } catch (error) {
      throw failed(error);
    }
  }

  async #query(
    stream: Stream,
    lo: string,
    hi: string,
    limit: number,
    consistent: boolean,
  ): Promise<QueryPage> {
    const answer = await this.#send('Query', {
      ...(stream.index === undefined ? {} : { IndexName: stream.index }),
      KeyConditionExpression: `#p = :p AND #s BETWEEN :lo AND :hi`,
      ExpressionAttributeNames: { '#p': stream.partitionName, '#s': SK },
      ExpressionAttributeValues: { ':p': S(stream.partition), ':lo': S(lo), ':hi': S(hi) },
      ScanIndexForward: false,
      Limit: limit,
      // A time window of the base table reads strongly consistent (an index cannot).
      ...(consistent ? { ConsistentRead: true } : {}),
      ...(stream.lastKey === undefined ? {} : { ExclusiveStartKey: stream.lastKey }),
    });
    return {
      items: (answer.Items as Item[] | undefined) ?? [],
      lastKey: answer.LastEvaluatedKey as Item | undefined,
    };
  }

  /** Reads `stream` on until it found `need` records or ran out, within the page's Queries. */
  async #fill(
    stream: Stream,
    bounds: { lo: string; hi: string },
    need: number,
    budget: { queries: number },
    accept: (items: readonly Item[]) => Promise<readonly AuditRecord[]>,
    consistent: boolean,
  ): Promise<void> {
    while (!stream.done && stream.found.length < need && budget.queries > 0) {
      budget.queries -= 1;
      const page = await this.#query(stream, bounds.lo, bounds.hi, ITEMS_PER_READ, consistent);
      const last = sortKeyOf(page.items[page.items.length - 1]);
      if (last !== undefined) stream.frontier = last;
      stream.found.push(...(await accept(page.items)));
      stream.lastKey = page.lastKey;
      stream.done = page.lastKey === undefined;
    }
  }

  /** The records `items` hold, as the reader sees them, matching the filters and not the cursor. */
  #accept(query: AuditQuery, view: AuditView) {
    return (records: readonly (AuditRecord | undefined)[]): AuditRecord[] => {
      const found: AuditRecord[] = [];
      for (const held of records) {
        if (held === undefined || held.audit_id === query.before) continue;
        const seen = view(held);
        if (seen !== undefined && matchesFilters(seen, query)) found.push(seen);
      }
      return found;
    };
  }

  /** One stream's page: its records, and the next page's start when it stopped early. */
  #single(stream: Stream, query: AuditQuery): AuditPage {
    const records = stream.found.slice(0, query.limit);
    if (records.length === query.limit)
      return { records, next: (records[records.length - 1] as AuditRecord).audit_id };
    if (!stream.done && stream.frontier !== undefined) return { records, next: stream.frontier };
    return { records };
  }

  async #listByActor(query: AuditQuery, view: AuditView): Promise<AuditPage> {
    const bounds = this.#bounds(query);
    const accept = this.#accept(query, view);
    const stream = newStream(ACTOR, query.actor as string, AUDIT_TABLE.actorIndex);
    await this.#fill(
      stream,
      bounds,
      query.limit,
      { queries: MAX_QUERIES_PER_PAGE },
      async (items) => accept(items.map(recordOfItem)),
      false,
    );
    return this.#single(stream, query);
  }

  async #listByRecord(query: AuditQuery, view: AuditView): Promise<AuditPage> {
    const bounds = this.#bounds(query);
    const accept = this.#accept(query, view);
    const record = query.record as AuditPointer;
    const stream = newStream(PK, pointerPartition(record.model, record.id));
    const fetch = async (items: readonly Item[]): Promise<readonly AuditRecord[]> => {
      const ids = items.flatMap((item) => {
        const id = sortKeyOf(item);
        return id === undefined ? [] : [id];
      });
      const byId = await this.#batchGet(ids);
      return accept(ids.map((id) => byId.get(id)));
    };
    await this.#fill(stream, bounds, query.limit, { queries: MAX_QUERIES_PER_PAGE }, fetch, true);
    return this.#single(stream, query);
  }

  /** The records of `ids` (strongly consistent), by id. */
  async #batchGet(ids: readonly string[]): Promise<Map<string, AuditRecord>> {
    const byId = new Map<string, AuditRecord>();
    for (let start = 0; start < ids.length; start += ITEMS_PER_READ) {
      let keys: unknown[] = ids
        .slice(start, start + ITEMS_PER_READ)
        .map((id) => ({ [PK]: S(recordPartition(id)), [SK]: S(id) }));
      for (let round = 0; keys.length > 0 && round < 3; round += 1) {
        const answer = await this.client.send(
          'BatchGetItem',
          { RequestItems: { [this.table]: { Keys: keys, ConsistentRead: true } } },
          { retrySafe: true },
        );
        const responses = (answer.Responses as Record<string, Item[]> | undefined)?.[this.table] ?? [];
        for (const item of responses) {
          const record = recordOfItem(item);
          if (record !== undefined) byId.set(record.audit_id, record);
        }
        const unprocessed = answer.UnprocessedKeys as Record<string, { Keys: unknown[] }> | undefined;
        keys = unprocessed?.[this.table]?.Keys ?? [];
      }
      if (keys.length > 0) throw new AuditStoreError('the audit table did not return every record asked for');
    }
    return byId;
  }

  /**
   * Newest first over the days of the window: each day's shards read until each found a page's
   * worth (or ran out), merged. A page that stops early (its Queries or days spent) ends where
   * every shard has been read, so the next page misses nothing.
   */
  async #listByTime(query: AuditQuery, view: AuditView): Promise<AuditPage> {
    const bounds = this.#bounds(query);
    const accept = this.#accept(query, view);
    const records: AuditRecord[] = [];
    const budget = { queries: MAX_QUERIES_PER_PAGE };
    const firstDay = auditDay(query.since);
    let day = auditDay(auditIdTime(bounds.hi));
    for (let days = 0; day >= firstDay; days += 1) {
      const dayStart = Date.parse(`${day}T00:00:00.000Z`);
      if (days === MAX_DAYS_PER_PAGE || budget.queries < AUDIT_SHARDS) {
        return { records, next: lowestAuditId(dayStart + 86_400_000) };
      }
      const need = query.limit - records.length;
      const streams = Array.from({ length: AUDIT_SHARDS }, (_, shard) =>
        newStream(PK, dayPartition(day, shard)),
      );
      await Promise.all(
        streams.map((stream) =>
          this.#fill(stream, bounds, need, budget, async (items) => accept(items.map(recordOfItem)), true),
        ),
      );
      // Where every shard has been read down to: the records at or above it are all known.
      const unread = streams.filter((stream) => !stream.done);
      const floor =
        unread.length === 0
          ? undefined
          : unread
              .map((stream) => stream.frontier ?? bounds.hi)
              .sort()
              .at(-1);
      const merged = streams
        .flatMap((stream) => stream.found)
        .filter((record) => floor === undefined || record.audit_id >= floor)
        .sort((a, b) => (a.audit_id < b.audit_id ? 1 : -1));
      records.push(...merged.slice(0, need));
      if (records.length === query.limit) {
        return { records, next: (records[records.length - 1] as AuditRecord).audit_id };
      }
      if (floor !== undefined) return { records, next: floor };
      day = auditDay(dayStart - 1);
    }
    return { records };
  }
}

function newStream(partitionName: string, partition: string, index?: string): Stream {
  return {
    ...(index === undefined ? {} : { index }),
    partitionName,
    partition,
    lastKey: undefined,
    done: false,
    frontier: undefined,
    found: [],
  };
}

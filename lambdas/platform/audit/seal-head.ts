/**
 * @module platform/audit/seal-head
 * Where the chain of seals has got to (docs/guide/audit.md, "Sealed"): the last sealed window's end
 * and head. It advances only from the head a sealer read, so two sealers (EventBridge delivers a
 * schedule at least once; two local processes) cannot fork the chain: the second finds it moved.
 *
 * On the audit table it is one item (`pk` = `sk` = {@link SEAL_HEAD_KEY}) written with a condition
 * on the previous head; a local run without DynamoDB reads it from the archive's last seal (its
 * exclusive creates are the condition).
 */
import type { DynamoDbClient, Item } from '../aws/dynamodb-client.ts';
import { DynamoDbRefusal } from '../aws/dynamodb-client.ts';
import { AUDIT_TABLE } from './audit-record.ts';
import type { SealArchive } from './seal-archive.ts';
import { SEAL_PREFIXES, sealOfBody } from './seal-layout.ts';

/** The last sealed window's end (epoch ms) and the chain's head after it. */
export interface SealHead {
  readonly head: string;
  readonly end: number;
}

export interface SealHeadStore {
  /** The head, strongly consistent; `undefined` before the first seal. */
  read(): Promise<SealHead | undefined>;
  /** Moves the head from `from` (`undefined`: no seal yet) to `to`; `false` when it was not at `from`. */
  advance(from: SealHead | undefined, to: SealHead, sealedAt: number): Promise<boolean>;
}

/** The seal head item's partition and sort key. */
export const SEAL_HEAD_KEY = 'seal#head';

const { partitionKey: PK, sortKey: SK } = AUDIT_TABLE;
const KEY = { [PK]: { S: SEAL_HEAD_KEY }, [SK]: { S: SEAL_HEAD_KEY } };

export class DynamoDbSealHead implements SealHeadStore {
  constructor(
    private readonly client: DynamoDbClient,
    private readonly table: string,
  ) {}

  async read(): Promise<SealHead | undefined> {
    const answer = await this.client.send(
      'GetItem',
      { TableName: this.table, Key: KEY, ConsistentRead: true },
      { retrySafe: true },
    );
    const item = answer.Item as Item | undefined;
    const head = item?.head;
    const end = item?.window_end;
    if (item === undefined) return undefined;
    if (head === undefined || !('S' in head) || end === undefined || !('N' in end)) {
      throw new Error('the seal head item does not read');
    }
    return { head: head.S, end: Number(end.N) };
  }

  async advance(from: SealHead | undefined, to: SealHead, sealedAt: number): Promise<boolean> {
    try {
      await this.client.send(
        'UpdateItem',
        {
          TableName: this.table,
          Key: KEY,
          UpdateExpression: 'SET head = :head, window_end = :end, sealed_at = :at',
          ConditionExpression:
            from === undefined ? `attribute_not_exists(${PK})` : 'head = :was AND window_end = :wasEnd',
          ExpressionAttributeValues: {
            ':head': { S: to.head },
            ':end': { N: String(to.end) },
            ':at': { S: new Date(sealedAt).toISOString() },
            ...(from === undefined ? {} : { ':was': { S: from.head }, ':wasEnd': { N: String(from.end) } }),
          },
        },
        // A second send of an applied advance is refused by its own condition: the caller re-reads.
        { retrySafe: true },
      );
      return true;
    } catch (error) {
      if (error instanceof DynamoDbRefusal && error.type === 'ConditionalCheckFailedException') return false;
      throw error;
    }
  }
}

/** The head of a local archive: its last seal (read once, then kept as this process advances it). */
export class ArchiveSealHead implements SealHeadStore {
  #held: SealHead | undefined;
  #known = false;

  constructor(private readonly archive: SealArchive) {}

  async read(): Promise<SealHead | undefined> {
    if (this.#known) return this.#held;
    const seals = await this.archive.list(SEAL_PREFIXES.seals);
    const last = seals.filter((object) => !object.deleted).at(-1);
    const body = last === undefined ? undefined : await this.archive.read(last.key);
    const sealed = body === undefined ? undefined : sealOfBody(body);
    if (last !== undefined && sealed === undefined) throw new Error(`${last.key} does not read as a seal`);
    this.#held =
      sealed === undefined ? undefined : { head: sealed.seal.head, end: Date.parse(sealed.seal.window_end) };
    this.#known = true;
    return this.#held;
  }

  async advance(from: SealHead | undefined, to: SealHead): Promise<boolean> {
    if (this.#known && (this.#held?.head !== from?.head || this.#held?.end !== from?.end)) return false;
    this.#held = to;
    this.#known = true;
    return true;
  }

  /** Forgets the kept head (another process sealed): the next read reads the archive. */
  forget(): void {
    this.#known = false;
  }
}

/**
 * The deploy's state table check (lambdas/platform/state/table-write-check.ts) against Amazon's
 * DynamoDB Local: it writes one `check#` item with a short TTL, updates it and deletes it (gone
 * after), with the client and configuration the functions use; on a missing table it fails naming
 * the operation and the table, never a credential. (DynamoDB Local takes any signature and has no
 * grants: the role itself is only checked by the deployed trigger, test/infra/erp-proxy-stack.test.ts.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it, vi } from 'vitest';
import type { DynamoDbClient } from '../../lambdas/platform/aws/dynamodb-client.ts';
import { loadConfig } from '../../lambdas/platform/config.ts';
import {
  PARTITION_KEY,
  STORE_KEY_PREFIX,
  STORE_OPERATIONS,
  TTL_ATTRIBUTE,
} from '../../lambdas/platform/state/state-store.ts';
import {
  CHECK_ITEM_TTL_SECONDS,
  checkConfiguredStateTable,
  checkStateTable,
  StateTableCheckError,
} from '../../lambdas/platform/state/table-write-check.ts';
import { STATE_TABLE_CHECK_ENTRY } from '../../lib/erp-proxy-stack.ts';
import { esbuildOptions } from '../../lib/proxy-function.ts';
import { futureNow, localClient, stateTableEnv } from '../support/dynamodb-local.ts';
import { useStateTable } from '../support/state-table.ts';

const state = useStateTable('check');
/** Ahead of the real clock: DynamoDB Local deletes what its TTL says is past (futureNow). */
const NOW = futureNow();
/** A secret key no message may ever show. */
const SECRET = 'check-secret-key-do-not-print-7f3a9c';

async function itemOf(key: string): Promise<Record<string, unknown> | undefined> {
  const got = await localClient(state.endpoint).send('GetItem', {
    TableName: state.table,
    Key: { [PARTITION_KEY]: { S: key } },
    ConsistentRead: true,
  });
  return got.Item as Record<string, unknown> | undefined;
}

/** The real client, reading the item back after each operation the check sends. */
function observing(client: DynamoDbClient, seen: { operation: string; item: unknown }[]): DynamoDbClient {
  return {
    async send(operation, input, options) {
      const answer = await client.send(operation, input, options);
      const item = input.Item ?? input.Key;
      const key = (item as Record<string, { S: string }>)[PARTITION_KEY]?.S ?? '';
      seen.push({ operation, item: await itemOf(key) });
      return answer;
    },
  };
}

describe('the state table check', () => {
  it('writes, updates and deletes one check# item with a short TTL, and leaves nothing behind', async () => {
    const seen: { operation: string; item: unknown }[] = [];
    const result = await checkStateTable(observing(localClient(state.endpoint), seen), state.table, NOW);
    expect(result.table).toBe(state.table);
    expect(result.key.startsWith(STORE_KEY_PREFIX.check)).toBe(true);
    expect(result.operations).toEqual([...STORE_OPERATIONS]);
    expect(seen.map((step) => step.operation)).toEqual(['PutItem', 'UpdateItem', 'DeleteItem']);
    expect(seen[0]?.item).toEqual({
      [PARTITION_KEY]: { S: result.key },
      [TTL_ATTRIBUTE]: { N: String(Math.floor(NOW / 1000) + CHECK_ITEM_TTL_SECONDS) },
    });
    expect(seen[1]?.item).toMatchObject({ checked_at: { N: String(NOW) } });
    expect(seen[2]?.item).toBeUndefined();
    expect(await itemOf(result.key)).toBeUndefined();
  });

  it('uses a fresh key each run', async () => {
    const first = await checkStateTable(localClient(state.endpoint), state.table, NOW);
    const second = await checkStateTable(localClient(state.endpoint), state.table, NOW);
    expect(first.key).not.toBe(second.key);
  });

  it("passes with the functions' configuration as Lambda gives it (STATE_TABLE, region, credentials)", async () => {
    const config = loadConfig({
      ...stateTableEnv(state.endpoint, state.table),
      AWS_LAMBDA_FUNCTION_NAME: 'erp-proxy-state-table-check',
      AWS_SECRET_ACCESS_KEY: SECRET,
    });
    expect(config.runtime).toBe('lambda');
    const result = await checkConfiguredStateTable(config, NOW);
    expect(await itemOf(result.key)).toBeUndefined();
  });

  it('fails on a missing table naming the operation and the table, never the secret key', async () => {
    const config = loadConfig({
      ...stateTableEnv(state.endpoint, 'no-such-table'),
      AWS_SECRET_ACCESS_KEY: SECRET,
    });
    const failure = await checkConfiguredStateTable(config, NOW).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(StateTableCheckError);
    const error = failure as StateTableCheckError;
    expect(error.operation).toBe('PutItem');
    expect(error.message).toMatch(
      /^state table check: PutItem on table no-such-table failed: DynamoDB ResourceNotFoundException: .+ \(the table does not exist in this region\)$/,
    );
    expect(error.message).not.toContain(SECRET);
    expect(String(error.stack)).not.toContain(SECRET);
  });

  it('fails when no table is configured', async () => {
    const config = loadConfig({
      AWS_LAMBDA_FUNCTION_NAME: 'erp-proxy-state-table-check',
      AWS_REGION: 'eu-west-1',
    });
    await expect(checkConfiguredStateTable(config, NOW)).rejects.toThrow(
      new StateTableCheckError('configuration', 'state table check: STATE_TABLE is not set'),
    );
  });

  it('fails without credentials on a Lambda with no endpoint, naming what is missing', async () => {
    const config = loadConfig({
      AWS_LAMBDA_FUNCTION_NAME: 'erp-proxy-state-table-check',
      AWS_REGION: 'eu-west-1',
      STATE_TABLE: state.table,
    });
    await expect(checkConfiguredStateTable(config, NOW)).rejects.toThrow(
      /^state table check: StoreUnavailableError: no AWS credentials in the environment \(AWS_ACCESS_KEY_ID\)$/,
    );
  });

  it('bundled as the stack bundles it (no AWS SDK), the handler checks the table of its environment', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'state-table-check-'));
    try {
      const file = join(dir, 'index.mjs');
      const root = fileURLToPath(new URL('../..', import.meta.url));
      const built = await build({
        ...esbuildOptions(resolve(root, STATE_TABLE_CHECK_ENTRY), file),
        metafile: true,
      });
      expect(Object.keys(built.metafile.inputs).filter((input) => input.includes('@aws-sdk'))).toEqual([]);
      // Lambda's environment: the function name, the region, the credentials, and the stack's STATE_TABLE.
      for (const [name, value] of Object.entries({
        ...stateTableEnv(state.endpoint, state.table),
        AWS_LAMBDA_FUNCTION_NAME: 'erp-proxy-state-table-check',
      }))
        vi.stubEnv(name, value);
      const { handler } = (await import(pathToFileURL(file).href)) as {
        handler: () => Promise<{ table: string; key: string; operations: string[] }>;
      };
      const result = await handler();
      expect(result).toMatchObject({ table: state.table, operations: [...STORE_OPERATIONS] });
      expect(await itemOf(result.key)).toBeUndefined();
    } finally {
      vi.unstubAllEnvs();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * @module platform/audit/audit-store-choice
 * Which audit store the configuration names (docs/guide/audit.md, "Where it lives"): deployed, the
 * stack's audit table; locally, that table at `AWS_ENDPOINT_URL_DYNAMODB` when `AUDIT_TABLE` names
 * one (`npm run state:local` creates it), else the embedded ring. The DynamoDB store is loaded on
 * the first record, never at cold start.
 */
import type { Config } from '../config.ts';
import type { AuditStore } from './audit-store.ts';
import { EmbeddedAuditStore } from './audit-store-embedded.ts';

/** The audit store of this configuration; `undefined` when none is configured (a function deployed without the table). */
export function createAuditStore(
  config: Pick<
    Config,
    | 'runtime'
    | 'audit'
    | 'auditTable'
    | 'dynamodbEndpoint'
    | 'region'
    | 'awsAccessKeyId'
    | 'awsSecretAccessKey'
    | 'awsSessionToken'
  >,
): AuditStore | undefined {
  if (config.audit === 'off') return undefined;
  const table = config.auditTable;
  const onTable =
    table !== undefined && (config.runtime === 'lambda' || config.dynamodbEndpoint !== undefined);
  if (!onTable) return config.runtime === 'lambda' ? undefined : new EmbeddedAuditStore();
  let store: Promise<AuditStore> | undefined;
  const load = (): Promise<AuditStore> => {
    store ??= import('./audit-store-dynamodb.ts').then(({ DynamoDbAuditStore }) =>
      DynamoDbAuditStore.fromConfig(config, table, config.dynamodbEndpoint),
    );
    return store;
  };
  return {
    kind: 'dynamodb',
    create: async (record, expiresAt) => (await load()).create(record, expiresAt),
    finish: async (record, expiresAt) => (await load()).finish(record, expiresAt),
    point: async (record, pointers, expiresAt) => (await load()).point(record, pointers, expiresAt),
    list: async (query, view) => (await load()).list(query, view),
  };
}

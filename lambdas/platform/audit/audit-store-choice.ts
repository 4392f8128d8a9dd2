/**
 * @module platform/audit/audit-store-choice
 * Which audit store the configuration names (docs/guide/audit.md, "Where it lives"): deployed, the
 * stack's audit table; locally, that table at `AWS_ENDPOINT_URL_DYNAMODB` when `AUDIT_TABLE` names
 * one (`npm run state:local` creates it), else the embedded ring (the local server gives its one
 * ring to the writers and to `GET /_/audit`). The writers' and the reader's DynamoDB modules are
 * chosen apart ({@link createAuditWriter}, {@link createAuditReader}), so each function's bundle
 * holds only the one the stack grants it; each is loaded on first use, never at cold start.
 */
import type { Config } from '../config.ts';
import type { AuditReader, AuditWriter } from './audit-store.ts';
import { EmbeddedAuditStore } from './audit-store-embedded.ts';

type AuditStoreConfig = Pick<
  Config,
  | 'runtime'
  | 'audit'
  | 'auditTable'
  | 'dynamodbEndpoint'
  | 'region'
  | 'awsAccessKeyId'
  | 'awsSecretAccessKey'
  | 'awsSessionToken'
>;

/** Where the records go: the table, the embedded ring, or none (off, or deployed without the table). */
export function auditStoreKind(
  config: Pick<Config, 'audit' | 'runtime' | 'auditTable' | 'dynamodbEndpoint'>,
): 'dynamodb' | 'embedded' | 'none' {
  if (config.audit === 'off') return 'none';
  if (
    config.auditTable !== undefined &&
    (config.runtime === 'lambda' || config.dynamodbEndpoint !== undefined)
  ) {
    return 'dynamodb';
  }
  return config.runtime === 'lambda' ? 'none' : 'embedded';
}

/** A store of the table, loaded from `load` on its first use. */
function onFirstUse<T extends object>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => {
    loaded ??= load();
    return loaded;
  };
}

/** The audit writer of this configuration (the execute and mcp functions); `undefined`: none. */
export function createAuditWriter(config: AuditStoreConfig): AuditWriter | undefined {
  const kind = auditStoreKind(config);
  if (kind === 'none') return undefined;
  if (kind === 'embedded') return new EmbeddedAuditStore();
  const table = config.auditTable as string;
  const load = onFirstUse(() =>
    import('./audit-store-dynamodb.ts').then(({ DynamoDbAuditStore }) =>
      DynamoDbAuditStore.fromConfig(config, table, config.dynamodbEndpoint),
    ),
  );
  return {
    kind: 'dynamodb',
    create: async (record, expiresAt) => (await load()).create(record, expiresAt),
    finish: async (record, expiresAt, options) => (await load()).finish(record, expiresAt, options),
    point: async (record, pointers, expiresAt) => (await load()).point(record, pointers, expiresAt),
  };
}

/** The audit reader of this configuration (the aux function); `undefined`: none. */
export function createAuditReader(config: AuditStoreConfig): AuditReader | undefined {
  const kind = auditStoreKind(config);
  if (kind === 'none') return undefined;
  if (kind === 'embedded') return new EmbeddedAuditStore();
  const table = config.auditTable as string;
  const load = onFirstUse(() =>
    import('./audit-reader-dynamodb.ts').then(({ DynamoDbAuditReader }) =>
      DynamoDbAuditReader.fromConfig(config, table, config.dynamodbEndpoint),
    ),
  );
  return { kind: 'dynamodb', list: async (query, view) => (await load()).list(query, view) };
}

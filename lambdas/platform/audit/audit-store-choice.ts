/**
 * @module platform/audit/audit-store-choice
 * Which audit store the configuration names (docs/guide/audit.md, "Where it lives"): deployed, the
 * stack's audit table; locally, that table at `AWS_ENDPOINT_URL_DYNAMODB` when `AUDIT_TABLE` names
 * one (`npm run state:local` creates it), else the embedded ring (the local server gives its one
 * ring to the writers and to `GET /_/audit`). The writers' DynamoDB module is loaded on the first
 * record, never at cold start; the reader is chosen apart (audit-reader-choice.ts), so each
 * function's bundle holds only the one the stack grants it.
 */
import { type AuditStoreConfig, type AuditWriter, auditStoreKind } from './audit-store.ts';
import { EmbeddedAuditStore } from './audit-store-embedded.ts';

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

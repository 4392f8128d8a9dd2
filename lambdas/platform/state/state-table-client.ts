/**
 * @module platform/state/state-table-client
 * The state table's DynamoDB client as the functions make it (the store, the brakes, the deploy's
 * table check and the audit store share it).
 */
import type { AwsCredentials } from '../aws/aws-sigv4.ts';
import {
  createDynamoDbClient,
  type DynamoDbClient,
  type DynamoDbClientOptions,
} from '../aws/dynamodb-client.ts';
import type { Config } from '../config.ts';
import { StoreUnavailableError } from './state-store.ts';

/** What {@link stateTableClient} reads of the configuration. */
export type StateClientConfig = Pick<
  Config,
  'region' | 'awsAccessKeyId' | 'awsSecretAccessKey' | 'awsSessionToken'
>;

/**
 * The table's client as the functions make it: Lambda's credentials and region; against an
 * endpoint of your own (DynamoDB Local) without credentials, placeholder ones (DynamoDB Local
 * takes any). The store, the deploy's table check (`table-write-check.ts`) and the audit store
 * (`platform/audit/audit-store-dynamodb.ts`, with a shorter time limit) use it.
 */
export function stateTableClient(
  config: StateClientConfig,
  endpoint: string | undefined,
  timing: Pick<DynamoDbClientOptions, 'budgetMs' | 'requestTimeoutMs'> = {},
): DynamoDbClient {
  let credentials: AwsCredentials;
  if (config.awsAccessKeyId && config.awsSecretAccessKey) {
    credentials = {
      accessKeyId: config.awsAccessKeyId,
      secretAccessKey: config.awsSecretAccessKey,
      sessionToken: config.awsSessionToken,
    };
  } else if (endpoint !== undefined) {
    credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  } else {
    throw new StoreUnavailableError('no AWS credentials in the environment (AWS_ACCESS_KEY_ID)');
  }
  return createDynamoDbClient({ endpoint, region: config.region ?? 'us-east-1', credentials, ...timing });
}

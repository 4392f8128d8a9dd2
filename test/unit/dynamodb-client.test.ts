/**
 * The DynamoDB client (`platform/aws/dynamodb-client.ts`; issue 45, item 7) against a loopback
 * HTTP server that answers as the test says: the endpoint of a region's partition, an endpoint
 * with a path signed as the AWS SDK's signer signs it, throttling retried, a 5xx retried only for a
 * write whose second send is safe (never a counter's ADD), at most three attempts within the call's
 * budget; and the store's pause after DynamoDB failed (the store, not its callers, knows it is down).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createDynamoDbClient,
  DynamoDbUnavailableError,
  MAX_ATTEMPTS,
  type RetryClock,
  regionalEndpoint,
} from '../../lambdas/platform/aws/dynamodb-client.ts';
import { StoreUnavailableError } from '../../lambdas/platform/state/state-store.ts';
import {
  DynamoDbStateStore,
  STORE_DOWN_PAUSE_MS,
} from '../../lambdas/platform/state/state-store-dynamodb.ts';
import { NodeSha256 } from '../support/sdk-sha256.ts';

const CREDENTIALS = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
};

interface Seen {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A loopback server answering each request with the next of `answers` (the last one repeats). */
async function dynamo(
  answers: readonly (readonly [number, object])[],
  onRequest: () => void = () => {},
): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      onRequest();
      const [status, body] = answers[Math.min(seen.length, answers.length) - 1] as readonly [number, object];
      res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0' }).end(JSON.stringify(body));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const THROTTLED = [
  400,
  { __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException', message: 'slow down' },
] as const;
const FAILED = [500, { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError' }] as const;
const OK = [200, { Attributes: { n: { N: '1' } } }] as const;

/** A clock that needs no waiting: back-offs pass at once; the test moves it on. */
function fakeClock(): RetryClock & { advance(ms: number): void } {
  let now = 1_800_000_000_000;
  const advance = (ms: number): void => {
    now += ms;
  };
  return { now: () => now, sleep: async (ms) => advance(ms), advance };
}

describe('the DynamoDB client', () => {
  it("takes the endpoint of the region's partition", () => {
    expect(regionalEndpoint('eu-west-1')).toBe('https://dynamodb.eu-west-1.amazonaws.com');
    expect(regionalEndpoint('cn-north-1')).toBe('https://dynamodb.cn-north-1.amazonaws.com.cn');
    expect(regionalEndpoint('cn-northwest-1')).toBe('https://dynamodb.cn-northwest-1.amazonaws.com.cn');
  });

  it("sends to an endpoint's path, signed as the AWS SDK's signer signs that path", async () => {
    const server = await dynamo([OK]);
    const client = createDynamoDbClient({
      endpoint: `${server.url}/dynamo/db`,
      region: 'cn-north-1',
      credentials: CREDENTIALS,
    });
    await client.send('UpdateItem', { TableName: 't' });
    const [request] = server.seen;
    expect(request?.path).toBe('/dynamo/db');
    const amzDate = String(request?.headers['x-amz-date']);
    const date = new Date(
      `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
    );
    const sdk = new SignatureV4({
      credentials: CREDENTIALS,
      region: 'cn-north-1',
      service: 'dynamodb',
      sha256: NodeSha256,
      applyChecksum: false,
    });
    const host = new URL(server.url).host;
    const signed = await sdk.sign(
      {
        method: 'POST',
        protocol: 'http:',
        hostname: '127.0.0.1',
        path: '/dynamo/db',
        headers: {
          'content-type': 'application/x-amz-json-1.0',
          'x-amz-target': 'DynamoDB_20120810.UpdateItem',
          host,
        },
        body: request?.body,
      },
      { signingDate: date },
    );
    expect(request?.headers.authorization).toBe(signed.headers.authorization);
  });

  it('retries a throttled answer, even for a counter, and returns the next answer', async () => {
    const server = await dynamo([THROTTLED, OK]);
    const client = createDynamoDbClient({
      endpoint: server.url,
      region: 'eu-west-1',
      credentials: CREDENTIALS,
      clock: fakeClock(),
    });
    expect(await client.send('UpdateItem', { UpdateExpression: 'ADD n :one' })).toEqual(OK[1]);
    expect(server.seen).toHaveLength(2);
  });

  it("never sends a counter's ADD twice after a 5xx; a token-conditional write at most three times", async () => {
    const server = await dynamo([FAILED]);
    const client = createDynamoDbClient({
      endpoint: server.url,
      region: 'eu-west-1',
      credentials: CREDENTIALS,
      clock: fakeClock(),
    });
    await expect(client.send('UpdateItem', { UpdateExpression: 'ADD n :one' })).rejects.toBeInstanceOf(
      DynamoDbUnavailableError,
    );
    expect(server.seen).toHaveLength(1);
    await expect(client.send('PutItem', {}, { retrySafe: true })).rejects.toThrow(/attempt 3 of at most 3/);
    expect(server.seen).toHaveLength(1 + MAX_ATTEMPTS);
  });

  it("makes no attempt the call's budget has no room for", async () => {
    const clock = fakeClock();
    // Each answer takes a second of the budget: after two, no room is left for a third.
    const server = await dynamo([THROTTLED], () => clock.advance(1_000));
    const client = createDynamoDbClient({
      endpoint: server.url,
      region: 'eu-west-1',
      credentials: CREDENTIALS,
      budgetMs: 1_500,
      clock,
    });
    await expect(client.send('PutItem', {}, { retrySafe: true })).rejects.toThrow(/attempt 2 of at most 3/);
    expect(server.seen.length).toBeLessThan(MAX_ATTEMPTS);
  });
});

describe('the DynamoDB store after DynamoDB failed', () => {
  it(`fails every operation at once for ${STORE_DOWN_PAUSE_MS} ms, a keyed write included, then asks again`, async () => {
    const server = await dynamo([FAILED]);
    const clock = fakeClock();
    const client = createDynamoDbClient({
      endpoint: server.url,
      region: 'eu-west-1',
      credentials: CREDENTIALS,
      clock,
    });
    const store = new DynamoDbStateStore(client, 'state', clock.now);
    const step = { key: 'k', limit: 5, expiresAt: 2_000_000_000 };
    await expect(store.countRequest(step)).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(server.seen).toHaveLength(1);
    const attempt = {
      key: 'r',
      owner: 'o',
      fingerprint: 'f',
      token: 't',
      leaseUntil: 0,
      expiresAt: 2_000_000_000,
    };
    await expect(store.beginAttempt(attempt, clock.now())).rejects.toThrow(/not asked again/);
    clock.advance(STORE_DOWN_PAUSE_MS - 1);
    await expect(store.countRequest(step)).rejects.toThrow(/not asked again/);
    expect(server.seen).toHaveLength(1);
    clock.advance(1);
    await expect(store.countRequest(step)).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(server.seen).toHaveLength(2);
  });
});

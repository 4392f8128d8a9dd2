/**
 * The SigV4 signer of the DynamoDB client (lambdas/platform/aws/aws-sigv4.ts) against the AWS SDK's own
 * signer (`@smithy/signature-v4`, what `@aws-sdk/client-dynamodb` signs with): the same request,
 * credentials and time give the same `Authorization` header, with and without a session token.
 */
import { SignatureV4 } from '@smithy/signature-v4';
import { describe, expect, it } from 'vitest';
import { signRequest } from '../../lambdas/platform/aws/aws-sigv4.ts';
import { NodeSha256 } from '../support/sdk-sha256.ts';

const DATE = new Date(Date.UTC(2026, 10, 28, 8, 30, 15));
const BODY = '{"TableName":"erp-proxy-state","Key":{"pk":{"S":"idem#abc"}}}';

describe.each([
  [
    'long-term credentials',
    { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
  ],
  [
    'a session token (Lambda)',
    {
      accessKeyId: 'ASIAEXAMPLE',
      secretAccessKey: 'secret/example+key',
      sessionToken: 'IQoJb3JpZ2luX2VjEXAMPLE==',
    },
  ],
])('signRequest with %s', (_name, credentials) => {
  it('gives the Authorization header the AWS SDK gives', async () => {
    const headers = {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': 'DynamoDB_20120810.DeleteItem',
    };
    const ours = signRequest({
      host: 'dynamodb.eu-west-1.amazonaws.com',
      region: 'eu-west-1',
      service: 'dynamodb',
      headers,
      body: BODY,
      credentials,
      date: DATE,
    });
    // applyChecksum off: the SDK would also sign an x-amz-content-sha256 header, which DynamoDB
    // does not need (the payload hash is in the canonical request either way).
    const sdk = new SignatureV4({
      credentials,
      region: 'eu-west-1',
      service: 'dynamodb',
      sha256: NodeSha256,
      applyChecksum: false,
    });
    const signed = await sdk.sign(
      {
        method: 'POST',
        protocol: 'https:',
        hostname: 'dynamodb.eu-west-1.amazonaws.com',
        path: '/',
        headers: { ...headers, host: 'dynamodb.eu-west-1.amazonaws.com' },
        body: BODY,
      },
      { signingDate: DATE },
    );
    expect(ours.authorization).toBe(signed.headers.authorization);
    expect(ours['x-amz-date']).toBe(signed.headers['x-amz-date']);
    if ('sessionToken' in credentials) expect(ours['x-amz-security-token']).toBe(credentials.sessionToken);
  });
});

describe('signRequest of an endpoint with a path', () => {
  it.each(['/', '/dynamodb', '/prefix/dynamodb/', '/a/./b/../c%20d/e(1)'])(
    'signs the path %s as the AWS SDK does',
    async (path) => {
      const credentials = {
        accessKeyId: 'AKIDEXAMPLE',
        secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
      };
      const headers = {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': 'DynamoDB_20120810.PutItem',
      };
      const host = 'gateway.example.com';
      const ours = signRequest({
        host,
        path,
        region: 'cn-north-1',
        service: 'dynamodb',
        headers,
        body: BODY,
        credentials,
        date: DATE,
      });
      const sdk = new SignatureV4({
        credentials,
        region: 'cn-north-1',
        service: 'dynamodb',
        sha256: NodeSha256,
        applyChecksum: false,
      });
      const signed = await sdk.sign(
        {
          method: 'POST',
          protocol: 'https:',
          hostname: host,
          path,
          headers: { ...headers, host },
          body: BODY,
        },
        { signingDate: DATE },
      );
      expect(ours.authorization).toBe(signed.headers.authorization);
    },
  );
});

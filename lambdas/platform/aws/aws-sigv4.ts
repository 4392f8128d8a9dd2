/**
 * @module platform/aws/aws-sigv4
 * AWS Signature Version 4 for one JSON POST to an AWS service endpoint, with `node:crypto` only:
 * what the proxy's DynamoDB client (`platform/aws/dynamodb-client.ts`) signs its requests with, so no
 * AWS SDK is on the path of a call (docs/design.md, "The proxy's state"). It signs exactly the
 * headers it is given plus `host` and `x-amz-date` (and `x-amz-security-token` with temporary
 * credentials, as Lambda's are), over the body's SHA-256.
 */
import { createHash, createHmac } from 'node:crypto';

/** Credentials as Lambda sets them (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`). */
export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string | undefined;
}

/** What is signed: a POST of `body` to `path` of `host`, for `service` in `region`. */
export interface SignedRequestInput {
  readonly host: string;
  /** The path the request is sent to, as sent (`/` unless the endpoint has one). */
  readonly path?: string;
  readonly region: string;
  readonly service: string;
  /** Lower-case names; the signed headers besides `host`, `x-amz-date` and the session token. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly credentials: AwsCredentials;
  /** The signing time; now by default (tests pass a fixed one for the reference vectors). */
  readonly date?: Date;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';

function sha256Hex(data: string): string {
  return createHash('sha256').update(data, 'utf8').digest('hex');
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}

/** `20261128T083000Z` and `20261128` of a date. */
function amzDates(date: Date): { readonly stamp: string; readonly day: string } {
  const stamp = date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  return { stamp, day: stamp.slice(0, 8) };
}

/** `encodeURIComponent`, and `!'()*` too (RFC 3986 unreserved characters only are left). */
function escapeUri(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/**
 * The canonical URI of a path, as the AWS SDK's signer makes it for every service but S3: empty
 * and `.` segments dropped, `..` taken back, then each segment URI-encoded (a path sent encoded is
 * so encoded twice, as SigV4 asks).
 */
export function canonicalPath(path: string): string {
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const trailing = segments.length > 0 && path.endsWith('/') ? '/' : '';
  return `/${segments.map(escapeUri).join('/')}${trailing}`;
}

/** The derived signing key depends only on the day, region and service: kept for the day. */
let cachedKey: { readonly id: string; readonly key: Buffer } | undefined;

function signingKey(secret: string, day: string, region: string, service: string): Buffer {
  const id = `${day}\n${region}\n${service}\n${sha256Hex(secret)}`;
  if (cachedKey?.id === id) return cachedKey.key;
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, day), region), service), 'aws4_request');
  cachedKey = { id, key };
  return key;
}

/**
 * The headers to send with the request: the given ones, `host`, `x-amz-date`, the session token
 * when there is one, and `authorization`.
 */
export function signRequest(input: SignedRequestInput): Record<string, string> {
  const { stamp, day } = amzDates(input.date ?? new Date());
  const headers: Record<string, string> = { ...input.headers, host: input.host, 'x-amz-date': stamp };
  if (input.credentials.sessionToken) headers['x-amz-security-token'] = input.credentials.sessionToken;
  const names = Object.keys(headers)
    .map((name) => name.toLowerCase())
    .sort();
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const canonicalHeaders = names
    .map((name) => `${name}:${String(lower[name]).trim().replace(/\s+/g, ' ')}\n`)
    .join('');
  const signedHeaders = names.join(';');
  const canonicalRequest = [
    'POST',
    canonicalPath(input.path ?? '/'),
    '',
    canonicalHeaders,
    signedHeaders,
    sha256Hex(input.body),
  ].join('\n');
  const scope = `${day}/${input.region}/${input.service}/aws4_request`;
  const stringToSign = [ALGORITHM, stamp, scope, sha256Hex(canonicalRequest)].join('\n');
  const signature = createHmac(
    'sha256',
    signingKey(input.credentials.secretAccessKey, day, input.region, input.service),
  )
    .update(stringToSign, 'utf8')
    .digest('hex');
  headers.authorization = `${ALGORITHM} Credential=${input.credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return headers;
}

/**
 * Secrets through the AWS Parameters and Secrets Lambda Extension (the deployed path): a
 * loopback server speaks the extension's localhost API, and the proxy-key and license sources
 * read from it without the AWS SDK.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { clearCaches } from '@aws-lambda-powertools/parameters';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Config, loadConfig } from '../../lambdas/platform/config.ts';
import { createLicenseSource, createProxyKeySource } from '../../lambdas/platform/secrets.ts';
import { startProxy } from '../support/proxy-harness.ts';
import {
  EXAMPLE_KEYS_SECRET_ARN,
  EXAMPLE_LICENSE_SECRET_ARN,
  TEST_PROXY_KEY,
} from '../support/test-secrets.ts';

const KEYS_SECRET = EXAMPLE_KEYS_SECRET_ARN;
const LICENSE_SECRET = EXAMPLE_LICENSE_SECRET_ARN;
const KEY = 'extension-key-0123456789abcdef';
const SESSION_TOKEN = 'session-token-of-the-function';

interface Answer {
  readonly status: number;
  readonly body: string;
}

let server: Server;
let port = 0;
const requests: { path: string; token: string | undefined }[] = [];
/** What the emulator answers per secret id: one answer every time, or a list taken in turn (the last repeats). */
let answers: Record<string, Answer | Answer[]> = {};

function answer(request: IncomingMessage): Answer {
  const url = new URL(request.url ?? '/', 'http://localhost');
  if (url.pathname !== '/secretsmanager/get') return { status: 404, body: 'not found' };
  if (request.headers['x-aws-parameters-secrets-token'] !== SESSION_TOKEN) {
    return { status: 401, body: 'missing or wrong X-Aws-Parameters-Secrets-Token' };
  }
  const planned = answers[url.searchParams.get('secretId') ?? ''];
  if (Array.isArray(planned)) return (planned.length > 1 ? planned.shift() : planned[0]) as Answer;
  return planned ?? { status: 400, body: '{"__type":"ResourceNotFoundException"}' };
}

beforeAll(async () => {
  server = createServer((request, response) => {
    requests.push({
      path: request.url ?? '',
      token: request.headers['x-aws-parameters-secrets-token'] as string | undefined,
    });
    const { status, body } = answer(request);
    response.writeHead(status, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, 'localhost', resolve));
  port = (server.address() as AddressInfo).port;
});
afterEach(() => {
  clearCaches();
  requests.length = 0;
  answers = {};
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function config(env: Record<string, string> = {}): Config {
  return loadConfig({
    AWS_LAMBDA_FUNCTION_NAME: 'erp-proxy-execute-v1',
    PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: String(port),
    PROXY_KEYS_SECRET_ID: KEYS_SECRET,
    LICENSE_SECRET_ID: LICENSE_SECRET,
    AWS_SESSION_TOKEN: SESSION_TOKEN,
    ...env,
  });
}

const secretValue = (id: string, value: string): Answer => ({
  status: 200,
  body: JSON.stringify({
    ARN: id,
    Name: 'n',
    VersionId: 'v1',
    SecretString: value,
    VersionStages: ['AWSCURRENT'],
  }),
});

describe('secrets through the Parameters and Secrets extension', () => {
  it('takes the extension port from PARAMETERS_SECRETS_EXTENSION_HTTP_PORT', () => {
    expect(config().secretsExtensionPort).toBe(port);
    expect(loadConfig({ AWS_LAMBDA_FUNCTION_NAME: 'f' }).secretsExtensionPort).toBeUndefined();
    expect(() => loadConfig({ PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: '70000' })).toThrow(/port number/);
  });

  it('reads the proxy keys with the session token, then serves them from the cache', async () => {
    answers[KEYS_SECRET] = secretValue(KEYS_SECRET, KEY);
    const keys = createProxyKeySource(config());
    expect(await keys.getKeys()).toEqual([{ name: 'default', key: KEY }]);
    expect(await keys.getKeys()).toEqual([{ name: 'default', key: KEY }]);
    expect(requests).toEqual([
      { path: `/secretsmanager/get?secretId=${encodeURIComponent(KEYS_SECRET)}`, token: SESSION_TOKEN },
    ]);
  });

  it("presents the configuration's AWS_SESSION_TOKEN (the settings catalogue's), never the process environment's", async () => {
    answers[KEYS_SECRET] = secretValue(KEYS_SECRET, KEY);
    vi.stubEnv('AWS_SESSION_TOKEN', SESSION_TOKEN);
    try {
      const other = await createProxyKeySource(config({ AWS_SESSION_TOKEN: 'another-functions-token' }))
        .getKeys()
        .then(
          () => 'read',
          (error: unknown) => String(error),
        );
      expect(other).toMatch(/HTTP 401/);
      expect(requests.map((request) => request.token)).toEqual(['another-functions-token']);
    } finally {
      vi.unstubAllEnvs();
    }
    clearCaches();
    expect(await createProxyKeySource(config()).getKeys()).toEqual([{ name: 'default', key: KEY }]);
    expect(requests.at(-1)?.token).toBe(SESSION_TOKEN);
  });

  it('reads the license; the placeholder and a missing secret are "no license", not errors', async () => {
    answers[LICENSE_SECRET] = secretValue(LICENSE_SECRET, '{}');
    const status = await createLicenseSource(config()).getLicense();
    expect(status).toMatchObject({
      is_valid: false,
      reason: expect.stringMatching(/^no license configured/),
    });

    clearCaches();
    delete answers[LICENSE_SECRET]; // the emulator answers 400 ResourceNotFoundException
    const missing = await createLicenseSource(config()).getLicense();
    expect(missing).toMatchObject({
      is_valid: false,
      reason: expect.stringMatching(/^no license configured/),
    });

    clearCaches();
    answers[LICENSE_SECRET] = secretValue(
      LICENSE_SECRET,
      JSON.stringify({ licensee: 'Example Ltd', valid_until: '2999-12-31' }),
    );
    expect(await createLicenseSource(config()).getLicense()).toMatchObject({
      licensee: 'Example Ltd',
      is_valid: true,
    });
  });

  it('fails a read the extension refuses with a message naming the secret and the error type only', async () => {
    answers[KEYS_SECRET] = { status: 500, body: `{"__type":"InternalServiceError","echo":"${KEY}"}` };
    const failure = await createProxyKeySource(config())
      .getKeys()
      .then(
        () => 'resolved',
        (error: Error) => error.message,
      );
    expect(failure).toContain(KEYS_SECRET);
    expect(failure).toContain('HTTP 500 (InternalServiceError)');
    expect(failure).not.toContain(KEY);
  });

  it('fails when nothing listens on the port, instead of falling back to the SDK', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, 'localhost', resolve));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const failure = await createProxyKeySource(
      config({ PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: String(deadPort) }),
    )
      .getKeys()
      .then(
        () => 'resolved',
        (error: Error) => error.message,
      );
    expect(failure).toMatch(/could not be read: .*ECONNREFUSED/);
  });
});

/**
 * The extension's answer while it is still starting (issue 24): HTTP 400 with this plain text, as
 * client libraries of the extension see it (winebarrel/secretlamb's tests stub it so, and code
 * that retries on it matches this text in the body).
 */
const NOT_READY: Answer = { status: 400, body: 'not ready to serve traffic, please wait' };

/** The outcome of a read, as the message of its error or `'resolved'`. */
async function outcome(read: Promise<unknown>): Promise<string> {
  return read.then(
    () => 'resolved',
    (error: Error) => error.message,
  );
}

describe('the extension is not ready yet', () => {
  it('asks once more after "not ready", and the read succeeds', async () => {
    answers[KEYS_SECRET] = [NOT_READY, secretValue(KEYS_SECRET, KEY)];
    answers[LICENSE_SECRET] = [
      NOT_READY,
      secretValue(LICENSE_SECRET, JSON.stringify({ licensee: 'Example Ltd', valid_until: '2999-12-31' })),
    ];

    expect(await createProxyKeySource(config()).getKeys()).toEqual([{ name: 'default', key: KEY }]);
    expect(await createLicenseSource(config()).getLicense()).toMatchObject({ is_valid: true });

    const asked = requests.map((r) => decodeURIComponent(r.path.replace(/^.*secretId=/, '')));
    expect(asked).toEqual([KEYS_SECRET, KEYS_SECRET, LICENSE_SECRET, LICENSE_SECRET]);
  });

  it('fails as before when the second answer is "not ready" too, after exactly one retry', async () => {
    answers[KEYS_SECRET] = NOT_READY;
    const failure = await outcome(createProxyKeySource(config()).getKeys());
    expect(failure).toContain(KEYS_SECRET);
    expect(failure).toContain('HTTP 400 (not ready to serve traffic, also after one retry)');
    expect(requests).toHaveLength(2);

    clearCaches();
    requests.length = 0;
    answers[LICENSE_SECRET] = NOT_READY;
    expect(await outcome(createLicenseSource(config()).getLicense())).toMatch(
      /^license secret .*not ready to serve traffic/,
    );
    expect(requests).toHaveLength(2);
  });

  it.each([
    [
      'a missing secret',
      '{"__type":"ResourceNotFoundException","message":"Secrets Manager can\'t find the specified secret."}',
    ],
    [
      'access denied',
      '{"__type":"AccessDeniedException","message":"not authorized to perform: secretsmanager:GetSecretValue"}',
    ],
    [
      'a Secrets Manager error that says "not ready"',
      '{"__type":"InvalidRequestException","message":"not ready to serve traffic"}',
    ],
    ['a plain-text 400 that is not "not ready"', 'bad request'],
  ])('does not retry another 400: %s', async (_what, body) => {
    answers[KEYS_SECRET] = [{ status: 400, body }, secretValue(KEYS_SECRET, KEY)];
    expect(await outcome(createProxyKeySource(config()).getKeys())).toContain('HTTP 400');
    expect(requests).toHaveLength(1);
  });

  it('does not retry "not ready" text under another status', async () => {
    answers[KEYS_SECRET] = [{ status: 503, body: NOT_READY.body }, secretValue(KEYS_SECRET, KEY)];
    expect(await outcome(createProxyKeySource(config()).getKeys())).toContain('HTTP 503');
    expect(requests).toHaveLength(1);
  });

  it('reads a missing license as "no license" with one request, not two', async () => {
    expect(await createLicenseSource(config()).getLicense()).toMatchObject({ is_valid: false });
    expect(requests).toHaveLength(1);
  });
});

describe('a first request while the extension is not ready (through the local server)', () => {
  /** A proxy whose keys and license come from the emulated extension, as deployed. */
  function extensionProxy() {
    return startProxy({
      env: {
        PROXY_API_KEY: '',
        PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: String(port),
        PROXY_KEYS_SECRET_ID: KEYS_SECRET,
        LICENSE_SECRET_ID: LICENSE_SECRET,
        AWS_SESSION_TOKEN: SESSION_TOKEN,
      },
    });
  }
  const license = () =>
    secretValue(LICENSE_SECRET, JSON.stringify({ licensee: 'Example Ltd', valid_until: '2999-12-31' }));

  it('answers the first request instead of -32603 when the extension is ready on the retry', async () => {
    answers[KEYS_SECRET] = [NOT_READY, secretValue(KEYS_SECRET, TEST_PROXY_KEY)];
    answers[LICENSE_SECRET] = [NOT_READY, license()];
    const proxy = await extensionProxy();
    try {
      const version = await proxy.post('/api/erp/version', { id: 'first', url: 'http://169.254.169.254' });
      // Past the key and the license: the target policy answers (-32008), not an internal error.
      expect(version.status).toBe(403);
      expect(version.json).toMatchObject({ id: 'first', error: { code: -32008 } });
      const status = await proxy.get('/_/license', { 'x-api-key': TEST_PROXY_KEY });
      expect(status.status).toBe(200);
      expect(status.json).toMatchObject({ licensee: 'Example Ltd', is_valid: true });
    } finally {
      await proxy.close();
    }
  });

  it('still answers -32603 when the extension is not ready twice', async () => {
    answers[KEYS_SECRET] = NOT_READY;
    const proxy = await extensionProxy();
    try {
      const version = await proxy.post('/api/erp/version', { id: 'first', url: 'http://169.254.169.254' });
      expect(version.status).toBe(500);
      expect(version.json).toMatchObject({ error: { code: -32603 } });
    } finally {
      await proxy.close();
    }
  });
});

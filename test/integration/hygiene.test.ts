/**
 * Headers and data hygiene, compression and the target policy, end to end over HTTP.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BaseLookup } from '../../lambdas/upstream/target-policy.ts';
import { logLinesDuring } from '../support/captured-output.ts';
import {
  type Envelope,
  USERS,
  useErpAndProxy,
  useErpDouble,
  useProxy,
  withProxy,
} from '../support/fixtures.ts';
import { type HttpAnswer, TEST_PROXY_KEY } from '../support/proxy-harness.ts';

const admin = USERS.adminA;

async function fakeUpstream(handler: (req: IncomingMessage, body: string, res: ServerResponse) => void) {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => handler(req, body, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const v1Body = (url: string, extra: Record<string, unknown> = {}) => ({
  id: 'h',
  action: 'search_read',
  model_id: 'res.partner',
  params: [[]],
  keyword: { fields: ['name'] },
  erp_instance: { url, db: 'erp_a', user_id: admin.uid, api_key: admin.apiKey },
  ...extra,
});

describe('headers and data hygiene', () => {
  const { double, proxy } = useErpAndProxy({ mode: '19' });

  it('sends X-Forwarded-For with the client source IP and never a cookie', async () => {
    double.requests.length = 0;
    await proxy.post('/api/erp/execute', v1Body(double.url), { cookie: 'session_id=abc' });
    const sent = double.requests.at(-1)!;
    expect(sent.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(sent.headers.cookie).toBeUndefined();
  });

  it("refuses to send the caller's own proxy key to the ERP (v1 -32600, v2 -32007)", async () => {
    double.requests.length = 0;
    const v1 = await proxy.post(
      '/api/erp/execute',
      v1Body(double.url, {
        erp_instance: { url: double.url, db: 'erp_a', user_id: admin.uid, api_key: TEST_PROXY_KEY },
      }),
    );
    expect(v1.status).toBe(400);
    expect((v1.json as Envelope).error?.code).toBe(-32600);
    expect((v1.json as Envelope).error?.message).toContain('erp_instance.api_key is the proxy key');
    const v2 = await proxy.post('/v2/erp/execute', {
      id: 'h2',
      model_id: 'res.partner',
      method: 'search_count',
      kwargs: { domain: [] },
      erp_instance: { url: double.url, db: 'erp_a', api_key: TEST_PROXY_KEY },
    });
    expect(v2.status).toBe(400);
    expect((v2.json as Envelope).error?.code).toBe(-32007);
    expect(double.requests).toHaveLength(0);
    expect(JSON.stringify([v1.json, v2.json])).not.toContain(TEST_PROXY_KEY);
  });

  it.each([
    ['padded with spaces', ` ${TEST_PROXY_KEY} `, ` ${TEST_PROXY_KEY} `],
    ['padded in the body only', `\t${TEST_PROXY_KEY}\n`, TEST_PROXY_KEY],
  ])("refuses the caller's proxy key %s as the ERP key on v1, as on v2", async (_case, erpKey, header) => {
    double.requests.length = 0;
    const v1 = await proxy.post(
      '/api/erp/execute',
      v1Body(double.url, {
        erp_instance: { url: double.url, db: 'erp_a', user_id: admin.uid, api_key: erpKey },
      }),
      { 'x-api-key': header },
    );
    expect(v1.status).toBe(400);
    expect((v1.json as Envelope).error?.code).toBe(-32600);
    const v2 = await proxy.post(
      '/v2/erp/execute',
      {
        id: 'h2',
        model_id: 'res.partner',
        method: 'search_count',
        kwargs: { domain: [] },
        erp_instance: { url: double.url, db: 'erp_a', api_key: erpKey },
      },
      { 'x-api-key': header },
    );
    expect(v2.status).toBe(400);
    expect((v2.json as Envelope).error?.code).toBe(-32007);
    expect(double.requests).toHaveLength(0);
    expect(JSON.stringify([v1.json, v2.json])).not.toContain(TEST_PROXY_KEY);
  });

  it('passes params, keyword and kwargs on as written: every key (__proto__ included), every number', async () => {
    const received: string[] = [];
    const upstream = await fakeUpstream((req, body, res) => {
      received.push(body);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.url === '/jsonrpc' ? '{"jsonrpc":"2.0","id":1,"result":1}' : '1');
    });
    const odd = '{"domain":[],"__proto__":{"polluted":1},"constructor":1,"n":1.0,"big":12345678901234567890}';
    try {
      const v1 = await proxy.post(
        '/api/erp/execute',
        `{"id":"p1","action":"search_count","model_id":"res.partner","params":[[]],"keyword":${odd},` +
          `"erp_instance":{"url":"${upstream.url}","db":"erp_a","user_id":2,"api_key":"${admin.apiKey}"}}`,
      );
      const v2 = await proxy.post(
        '/v2/erp/execute',
        `{"id":"p2","model_id":"res.partner","method":"search_count","kwargs":${odd},` +
          `"erp_instance":{"url":"${upstream.url}","db":"erp_a","api_key":"${admin.apiKey}"}}`,
      );
      expect([v1.status, v2.status]).toEqual([200, 200]);
      // Byte for byte: numbers keep their spelling (a parse and re-serialization would send 1 and
      // 12345678901234567000).
      expect(received[0]).toContain(
        `"args":["erp_a",2,"${admin.apiKey}","res.partner","search_count",[[]],${odd}]`,
      );
      expect(received[1]).toBe(odd);
      const keyword = JSON.parse(received[0] as string).params.args[6];
      expect(Object.keys(keyword)).toEqual(['domain', '__proto__', 'constructor', 'n', 'big']);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    } finally {
      await upstream.close();
    }
  });

  it('never passes a Set-Cookie from the ERP back to the client', async () => {
    const upstream = await fakeUpstream((_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': 'session_id=leak; Path=/' });
      res.end('{"jsonrpc":"2.0","id":1,"result":[]}');
    });
    try {
      const answer = await proxy.post('/api/erp/execute', v1Body(upstream.url));
      expect(answer.status).toBe(200);
      expect(answer.headers.get('set-cookie')).toBeNull();
    } finally {
      await upstream.close();
    }
  });

  it('passes the ERP debug traceback by default and strips it with ERP_STRIP_DEBUG', async () => {
    const bad = v1Body(double.url, { params: [['is_company', '=', true]] });
    const withDebug = (await proxy.post('/api/erp/execute', bad)).json as Envelope;
    expect(withDebug.error?.data).toHaveProperty('debug');

    await withProxy({ env: { ERP_STRIP_DEBUG: 'true' } }, async (stripping) => {
      const v1 = (await stripping.post('/api/erp/execute', bad)).json as Envelope;
      expect(v1.error?.code).toBe(0);
      expect(v1.error?.data).not.toHaveProperty('debug');
      expect(v1.error?.data).toHaveProperty('name', 'builtins.ValueError');

      const v2 = (
        await stripping.post('/v2/erp/execute', {
          id: 'd',
          model_id: 'res.partner',
          method: 'search',
          kwargs: { domain: ['is_company', '=', true] },
          erp_instance: { url: double.url, db: 'erp_a', api_key: admin.apiKey },
        })
      ).json as Envelope;
      expect(v2.error?.code).toBe(500);
      expect(v2.error?.data).not.toHaveProperty('debug');
    });
  });
});

describe('compression', () => {
  let upstream: Awaited<ReturnType<typeof fakeUpstream>>;
  const records = Array.from({ length: 4000 }, (_, i) => ({
    id: i,
    name: `Partner number ${i}`,
    email: false,
  }));

  beforeAll(async () => {
    upstream = await fakeUpstream((_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: records }));
    });
  });
  afterAll(async () => upstream.close());
  // A limit below the uncompressed size but well above the compressed one. Registered after the
  // upstream, so it closes first (after-all hooks run in reverse), taking its connections along.
  const proxy = useProxy({ env: { MAX_RESPONSE_BYTES: String(100 * 1024) } });

  const raw = async (encoding?: string) => {
    const response = await fetch(`${proxy.url}/api/erp/execute`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': TEST_PROXY_KEY,
        ...(encoding ? { 'accept-encoding': encoding } : {}),
      },
      body: JSON.stringify(v1Body(upstream.url)),
    });
    return {
      status: response.status,
      headers: response.headers,
      bytes: Buffer.from(await response.arrayBuffer()),
    };
  };

  it('without Accept-Encoding the answer over MAX_RESPONSE_BYTES is -32009', async () => {
    const { status, bytes } = await raw('identity');
    expect(status).toBe(502);
    expect((JSON.parse(bytes.toString()) as Envelope).error?.code).toBe(-32009);
  });

  it.each([
    ['gzip', gunzipSync],
    ['br', brotliDecompressSync],
  ])(
    'with Accept-Encoding: %s the answer is compressed and the limit applies to the compressed size',
    async (encoding, decode) => {
      // Node's fetch decodes transparently; ask at the socket level to see the encoding.
      const { request } = await import('node:http');
      const body = JSON.stringify(v1Body(upstream.url));
      const answer = await new Promise<{ status: number; encoding: string | undefined; data: Buffer }>(
        (resolve, reject) => {
          const req = request(
            `${proxy.url}/api/erp/execute`,
            {
              method: 'POST',
              headers: {
                'content-type': 'application/json',
                'x-api-key': TEST_PROXY_KEY,
                'accept-encoding': encoding,
              },
            },
            (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (chunk: Buffer) => chunks.push(chunk));
              res.on('end', () =>
                resolve({
                  status: res.statusCode ?? 0,
                  encoding: res.headers['content-encoding'],
                  data: Buffer.concat(chunks),
                }),
              );
            },
          );
          req.on('error', reject);
          req.end(body);
        },
      );
      expect(answer.status).toBe(200);
      expect(answer.encoding).toBe(encoding);
      const envelope = JSON.parse(decode(answer.data).toString()) as Envelope;
      expect(envelope.result).toEqual(records);
      expect(answer.data.length).toBeLessThan(100 * 1024);
    },
  );

  it('when even the compressed read limit is exceeded, -32009 does not suggest compression again', async () => {
    await withProxy({ env: { MAX_RESPONSE_BYTES: '4096' } }, async (small) => {
      const answer = await small.post('/api/erp/execute', v1Body(upstream.url), {
        'accept-encoding': 'gzip',
      });
      expect(answer.status).toBe(502);
      const envelope = answer.json as Envelope;
      expect(envelope.error?.code).toBe(-32009);
      expect(envelope.error?.message).toMatch(/limit\/offset/);
      expect(envelope.error?.message).not.toMatch(/Accept-Encoding/);
    });
  });

  it('q=0 turns an encoding off', async () => {
    const { status } = await raw('gzip;q=0');
    expect(status).toBe(502);
  });
});

describe('target policy end to end (-32008, HTTP 403)', () => {
  const double = useErpDouble({ mode: '19' });

  it.each([
    ['the metadata address', 'http://169.254.169.254'],
    ['a decimal spelling of loopback when loopback is not listed', 'http://2130706433:1'],
    ['an octal spelling of loopback when loopback is not listed', 'http://0177.0.0.1:1'],
    ['IPv4-mapped IPv6 metadata', 'http://[::ffff:169.254.169.254]'],
    ['a non-http scheme', 'ftp://127.0.0.1/'],
    ['user-info in the URL', 'http://someone:s3cr3tPw@127.0.0.1:1'],
    ['a private address', 'http://10.1.2.3'],
  ])('refuses %s', async (_name, url) => {
    await withProxy({ env: { ERP_ALLOWED_TARGETS: 'erp.example.com' } }, async (proxy) => {
      const answer = await proxy.post('/api/erp/execute', v1Body(url));
      expect(answer.status).toBe(403);
      const envelope = answer.json as Envelope;
      expect(envelope.error?.code).toBe(-32008);
      expect(answer.text).not.toContain('s3cr3tPw');
      expect(answer.text).not.toContain('someone');
    });
  });

  it('applies the same policy on v2 execute and on every version endpoint, before any request leaves', async () => {
    await withProxy({ env: { ERP_ALLOWED_TARGETS: 'erp.example.com' } }, async (proxy) => {
      double.requests.length = 0;
      // IP literals are never resolved, so the connect-time check alone would not catch them.
      for (const url of [double.url, 'http://169.254.169.254', 'http://[::ffff:169.254.169.254]']) {
        for (const path of ['/api/erp/version', '/v1/erp/version', '/v2/erp/version']) {
          const answer = await proxy.post(path, { id: 'v', url });
          expect(answer.status, `${path} ${url}`).toBe(403);
          expect((answer.json as Envelope).error?.code).toBe(-32008);
        }
        const v2 = await proxy.post('/v2/erp/execute', {
          id: 'p',
          model_id: 'res.partner',
          method: 'search_count',
          kwargs: { domain: [] },
          erp_instance: { url, db: 'erp_a', api_key: admin.apiKey },
        });
        expect(v2.status, `v2 ${url}`).toBe(403);
        expect((v2.json as Envelope).error?.code).toBe(-32008);
      }
      expect(double.requests.length).toBe(0);
    });
  });

  it('refuses a host name that resolves to a loopback address unless listed (checked at connect time)', async () => {
    await withProxy({ env: { ERP_ALLOWED_TARGETS: '10.0.0.0/8' } }, async (proxy) => {
      const answer = await proxy.post(
        '/api/erp/execute',
        v1Body(double.url.replace('127.0.0.1', 'localhost')),
      );
      expect(answer.status).toBe(403);
      expect((answer.json as Envelope).error?.code).toBe(-32008);
    });
  });

  it('answers a name not listed by name alike whether DNS knows it, maps it to a private or a metadata address (v1, v2, version)', async () => {
    // Prepare: a fake DNS; nothing resolves to the loopback, so no call can leave.
    const dns: Record<string, string[]> = {
      'private.internal': ['10.0.0.5'],
      'loopback.internal': ['127.0.0.2'],
      'metadata.internal': ['169.254.169.254'],
      'ec2meta.internal': ['fd00:ec2::254'],
      'public.example': ['192.0.2.10'],
    };
    const dnsLookup: BaseLookup = (hostname, _options, callback) => {
      const addresses = dns[hostname];
      if (addresses === undefined) {
        const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
        error.code = 'ENOTFOUND';
        setImmediate(() => callback(error, []));
        return;
      }
      setImmediate(() =>
        callback(
          null,
          addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
        ),
      );
    };
    for (const targets of [
      '203.0.113.0/24',
      '10.1.0.0/16,fd12::/16,localhost',
      'listed.example,198.51.100.0/24',
    ]) {
      await withProxy({ env: { ERP_ALLOWED_TARGETS: targets }, overrides: { dnsLookup } }, async (proxy) => {
        const answers = new Set<string>();
        for (const host of ['unknown.internal', ...Object.keys(dns)]) {
          const url = `http://${host}:8069`;
          // Act
          const calls = [
            await proxy.post('/api/erp/execute', v1Body(url)),
            await proxy.post('/api/erp/version', { id: 'v', url }),
            await proxy.post('/v2/erp/execute', {
              id: 'p',
              model_id: 'res.partner',
              method: 'search_count',
              kwargs: { domain: [] },
              erp_instance: { url, db: 'erp_a', api_key: admin.apiKey },
            }),
          ];
          for (const answer of calls) {
            const { error } = answer.json as Envelope;
            answers.add(`${answer.status} ${error?.code} ${error?.message?.replace(host, '<host>')}`);
          }
        }
        // Assess: one answer, whatever DNS said.
        expect([...answers], targets).toEqual([
          '403 -32008 Target <host> refused: it does not resolve to an address this proxy may reach',
        ]);
      });
    }
    // A DNS failure of a name the list names stays a DNS failure: the call did not run, retry.
    await withProxy(
      { env: { ERP_ALLOWED_TARGETS: 'unknown.internal,*.listed.example' }, overrides: { dnsLookup } },
      async (proxy) => {
        for (const host of ['unknown.internal', 'a.listed.example']) {
          const answer = await proxy.post('/api/erp/execute', v1Body(`http://${host}:8069`));
          expect(answer.status).toBe(503);
          expect((answer.json as Envelope).error?.code).toBe(-32004);
        }
      },
    );
  });

  it('the local server allows loopback by default', async () => {
    await withProxy({}, async (proxy) => {
      const answer = await proxy.post(
        '/api/erp/execute',
        v1Body(double.url.replace('127.0.0.1', 'localhost')),
      );
      expect(answer.status).toBe(200);
    });
  });

  it('ERP_ALLOWED_DATABASES refuses other databases on v1 and v2', async () => {
    await withProxy({ env: { ERP_ALLOWED_DATABASES: 'erp_b' } }, async (proxy) => {
      double.requests.length = 0;
      const v1 = await proxy.post('/api/erp/execute', v1Body(double.url));
      expect(v1.status).toBe(403);
      expect((v1.json as Envelope).error?.code).toBe(-32008);
      const v2 = await proxy.post('/v2/erp/execute', {
        id: 'db',
        model_id: 'res.partner',
        method: 'search_count',
        kwargs: { domain: [] },
        erp_instance: { url: double.url, db: 'erp_a', api_key: admin.apiKey },
      });
      expect(v2.status).toBe(403);
      expect(double.requests.length).toBe(0);
    });
  });
});

describe('bounded output', () => {
  const { double, proxy } = useErpAndProxy({ mode: '19' });

  it('cuts caller-supplied values in the log line: id, model, method, database', async () => {
    // Prepare: 1.4 MB each, 5.6 MB in all (under the 6 MB body limit). A name that long is no ERP
    // name (issue 54): v2 refuses it (-32007) with the facts it read, which the log line cuts.
    const big = (c: string) => c.repeat(1_400_000);
    const body = {
      id: big('i'),
      method: big('f'),
      model_id: big('m'),
      kwargs: {},
      erp_instance: { url: double.url, db: big('d'), api_key: admin.apiKey },
    };
    // Act
    let status = 0;
    const lines = await logLinesDuring(async () => {
      status = (await proxy.post('/v2/erp/execute', body)).status;
    });
    // Assess
    expect(status).toBe(400); // -32007: the names never reached the ERP
    const request = lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((l) => l.message === 'request');
    expect(request).toBeDefined();
    for (const field of ['envelope_id', 'action', 'model', 'erp_db']) {
      const value = String(request?.[field]);
      expect(value.length, field).toBeLessThan(400);
      expect(value, field).toMatch(/^(.)\1{255}…\[1399744 more characters\]$/);
    }
    for (const line of lines) expect(line.length).toBeLessThan(16 * 1024);
  });

  it('never repeats a long host name in an answer or a log line', async () => {
    const host = `${'a'.repeat(3_000_000)}.example.com`;
    const answers: HttpAnswer[] = [];
    const lines = await logLinesDuring(async () => {
      answers.push(await proxy.post('/api/erp/execute', v1Body(`http://${host}`)));
      answers.push(await proxy.post('/api/erp/version', { id: 'v', url: `https://${host}:8069` }));
      answers.push(
        await proxy.post('/v2/erp/execute', {
          id: 'h',
          model_id: 'res.partner',
          method: 'search_count',
          kwargs: {},
          erp_instance: { url: `http://${host}`, db: 'erp_a', api_key: admin.apiKey },
        }),
      );
    });
    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect(answer.text.length).toBeLessThan(1000);
      expect(answer.text).toMatch(/host name is longer than 253 characters/);
    }
    for (const line of lines) expect(line.length).toBeLessThan(16 * 1024);
  });

  it('repeats at most 100 characters of a database name in a -32006', async () => {
    const upstream = await fakeUpstream((_req, _body, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<p>No database is selected</p>');
    });
    try {
      const db = 'd'.repeat(4000);
      const answer = await proxy.post('/v2/erp/execute', {
        id: 'db',
        model_id: 'res.partner',
        method: 'search_count',
        kwargs: {},
        erp_instance: { url: upstream.url, db, api_key: admin.apiKey },
      });
      const { error } = answer.json as Envelope;
      expect(error?.code).toBe(-32006);
      expect(error?.message).toContain(`database "${'d'.repeat(100)}…"`);
      expect(error?.message.length).toBeLessThan(500);
    } finally {
      await upstream.close();
    }
  });

  it('a license error does not show the path of the license file', async () => {
    const file = '/nonexistent-erp-proxy-dir/secret-place/license.json';
    await withProxy({ env: { LICENSE_FILE: file } }, async (unlicensed) => {
      const answer = await unlicensed.post('/api/erp/execute', v1Body(double.url));
      expect(answer.status).toBe(403);
      expect((answer.json as Envelope).error?.message).toMatch(
        /license file \(LICENSE_FILE\) could not be read/,
      );
      expect(answer.text).not.toContain('secret-place');
      const license = await unlicensed.get('/_/license', { 'x-api-key': TEST_PROXY_KEY });
      expect(license.text).not.toContain('secret-place');
    });
  });
});

describe('hostile bodies', () => {
  const { double, proxy } = useErpAndProxy();
  const deep = (levels: number): string => `${'['.repeat(levels)}${']'.repeat(levels)}`;

  it('a repeated member that nests too deep but is overridden is accepted, as JSON.parse reads it, never -32603', async () => {
    const instance = `"erp_instance":{"url":"${double.url}","db":"erp_a","user_id":${admin.uid},"api_key":"${admin.apiKey}"}`;
    const v1 = await proxy.post(
      '/api/erp/execute',
      `{"id":"dup","action":"search_count","model_id":"res.partner","params":${deep(120)},"params":[[]],"x":${deep(150)},"x":1,${instance}}`,
    );
    expect(v1.status).toBe(200);
    expect(typeof (v1.json as Envelope).result).toBe('number');
    const v2 = await proxy.post(
      '/v2/erp/execute',
      `{"id":"dup2","model_id":"res.partner","method":"search_count","kwargs":{"domain":${deep(120)},"domain":[]},${instance}}`,
    );
    expect(v2.status).toBe(200);
    expect(typeof (v2.json as Envelope).result).toBe('number');
  });

  it('ignores a leading byte order mark', async () => {
    const instance = `"erp_instance":{"url":"${double.url}","db":"erp_a","user_id":${admin.uid},"api_key":"${admin.apiKey}"}`;
    const v1 = await proxy.post(
      '/api/erp/execute',
      `\ufeff{"id":"bom","action":"search_count","model_id":"res.partner","params":[[]],${instance}}`,
    );
    expect(v1.status).toBe(200);
    expect((v1.json as Envelope).id).toBe('bom');
    const v2 = await proxy.post(
      '/v2/erp/execute',
      `\ufeff{"id":"bom2","model_id":"res.partner","method":"search_count","kwargs":{"domain":[]},${instance}}`,
    );
    expect(v2.status).toBe(200);
  });

  it('refuses a compressed request body with a message naming Content-Encoding', async () => {
    const body = gzipSync(JSON.stringify(v1Body(double.url)));
    const send = (path: string) =>
      fetch(`${proxy.url}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-encoding': 'gzip',
          'x-api-key': TEST_PROXY_KEY,
        },
        body,
      });
    const v1 = await send('/api/erp/execute');
    expect(v1.status).toBe(400);
    const envelope = (await v1.json()) as Envelope;
    expect(envelope.error?.code).toBe(-32700);
    expect(envelope.error?.message).toContain('Content-Encoding: gzip');
    const v2 = await send('/v2/erp/execute');
    expect(v2.status).toBe(400);
    expect(await v2.text()).toContain('Content-Encoding: gzip');
  });

  it('refuses a body that is not UTF-8 (-32700, plain text on v2) and never rewrites it for the ERP', async () => {
    // Prepare: FF and C3 28 are not UTF-8; a lenient decoder makes them U+FFFD U+FFFD "(".
    const instance = `"erp_instance":{"url":"${double.url}","db":"erp_a","user_id":${admin.uid},"api_key":"${admin.apiKey}"}`;
    const bytes = (json: string) => {
      const [before, after] = json.split('@') as [string, string];
      return Buffer.concat([Buffer.from(before), Buffer.from([0xff, 0xc3, 0x28]), Buffer.from(after)]);
    };
    const send = (path: string, body: Buffer, contentType?: string) =>
      fetch(`${proxy.url}${path}`, {
        method: 'POST',
        headers: { ...(contentType ? { 'content-type': contentType } : {}), 'x-api-key': TEST_PROXY_KEY },
        body,
      });
    double.requests.length = 0;
    const v1Text = bytes(
      `{"id":"u8","action":"search_count","model_id":"res.partner","params":[[["name","=","@"]]],${instance}}`,
    );
    const v2Text = bytes(
      `{"id":"u8","model_id":"res.partner","method":"search_count","kwargs":{"domain":[["name","=","@"]]},${instance}}`,
    );
    for (const contentType of ['application/json', 'text/plain; charset=utf-8', undefined]) {
      // Act
      const v1 = await send('/api/erp/execute', v1Text, contentType);
      const version = await send(
        '/api/erp/version',
        bytes(`{"id":"u8","url":"${double.url}/@"}`),
        contentType,
      );
      const v2 = await send('/v2/erp/execute', v2Text, contentType);
      // Assess
      expect(v1.status).toBe(400);
      expect(((await v1.json()) as Envelope).error).toMatchObject({
        code: -32700,
        message: expect.stringMatching(/UTF-8/),
      });
      expect(version.status).toBe(400);
      expect(((await version.json()) as Envelope).error?.code).toBe(-32700);
      expect(v2.status).toBe(400);
      expect(v2.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await v2.text()).toMatch(/UTF-8/);
    }
    expect(double.requests).toHaveLength(0);
  });

  it('a deeply nested request is -32600 on v1 and plain text on v2, never -32603', async () => {
    const v1 = await proxy.post(
      '/api/erp/execute',
      `{"id":"deep","action":"search","model_id":"res.partner","params":${deep(200_000)},"erp_instance":{"url":"${double.url}","db":"erp_a","user_id":2,"api_key":"k"}}`,
    );
    expect(v1.status).toBe(400);
    expect((v1.json as Envelope).error?.code).toBe(-32600);
    expect((v1.json as Envelope).id).toBe('deep');
    const v2 = await proxy.post('/v2/erp/execute', `{"id":"deep","kwargs":{"x":${deep(5_000)}}}`);
    expect(v2.status).toBe(400);
    expect(v2.text).toMatch(/nests deeper/);
  });

  it('a deeply nested ERP answer is -32005, not -32603', async () => {
    const upstream = await fakeUpstream((_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"jsonrpc":"2.0","id":1,"result":${deep(100_000)}}`);
    });
    try {
      const answer = await proxy.post('/api/erp/execute', v1Body(upstream.url));
      expect(answer.status).toBe(502);
      expect((answer.json as Envelope).error?.code).toBe(-32005);
    } finally {
      await upstream.close();
    }
  });

  it('a body that is not JSON is refused without quoting it back (it may hold a key)', async () => {
    const secretish = 'sk-live-9f8e7d6c5b4a';
    const v1 = await proxy.post('/api/erp/execute', `{"erp_instance":{"api_key":${secretish}}}`);
    expect((v1.json as Envelope).error?.code).toBe(-32700);
    expect(v1.text).not.toContain(secretish);
    const v2 = await proxy.post('/v2/erp/execute', secretish);
    expect(v2.status).toBe(400);
    expect(v2.text).not.toContain(secretish);
  });
});

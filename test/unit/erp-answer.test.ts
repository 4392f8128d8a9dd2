/**
 * What an ERP answer is (`lambdas/upstream/erp-answer.ts`): every answer a real Odoo 19 gave in
 * the captures is read as the ERP's, and what other servers answer (a gateway's JSON 401, another
 * service's JSON 404, a bare JSON 500, a JSON-RPC server that is not Odoo) is -32005 naming the
 * status and the content type.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BadUpstreamResponseError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from '../../lambdas/platform/errors.ts';
import {
  JsonRpcMissingError,
  readJson2Answer,
  readJsonRpcAnswer,
  readWebVersionAnswer,
} from '../../lambdas/upstream/erp-answer.ts';
import type { UpstreamResponse } from '../../lambdas/upstream/http-client.ts';
import { asRecord, captureFiles, headerValue, loadCapture } from '../erp-double/capture-replay.ts';

const JSON_TYPE = 'application/json; charset=utf-8';

/** `type` null: no Content-Type header. */
function answer(status: number, body: string, type: string | null = JSON_TYPE): UpstreamResponse {
  return {
    status,
    headers: type === null ? {} : { 'content-type': type },
    body: Buffer.from(body, 'utf8'),
  };
}

/** The error `read` throws, or a failure when it returns. */
function thrown(read: () => unknown): Error {
  try {
    read();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected an error, got an answer');
}

function expectNotErp(read: () => unknown, status: number, type: string): void {
  const error = thrown(read);
  expect(error).toBeInstanceOf(BadUpstreamResponseError);
  expect(error.message).toContain(`HTTP ${status} ${type}`);
  expect(error.message).toContain('Check erp_instance.url');
}

describe('every answer of a real Odoo 19 (the captures) is read as the ERP', () => {
  const captures = captureFiles()
    .map(loadCapture)
    .filter((capture) => capture.request.path === '/jsonrpc' || capture.request.path.startsWith('/json/2/'));

  /** The captured answer as the proxy would have received it. */
  function received(capture: ReturnType<typeof loadCapture>): UpstreamResponse {
    const type = headerValue(capture.response.headers, 'content-type') ?? '';
    const { body } = capture.response;
    const text = type.startsWith('application/json') ? JSON.stringify(body) : String(body ?? '');
    return answer(capture.response.status, text, type);
  }

  it('has captures of both protocols to check', () => {
    expect(captures.filter((c) => c.request.path === '/jsonrpc').length).toBeGreaterThan(40);
    expect(captures.filter((c) => c.request.path.startsWith('/json/2/')).length).toBeGreaterThan(40);
  });

  it('/jsonrpc: each 200 is a result, None or an ERP error; nothing else is', () => {
    for (const capture of captures.filter((c) => c.request.path === '/jsonrpc')) {
      const response = received(capture);
      const id = Number(asRecord(capture.request.body).id);
      if (capture.response.status !== 200) {
        // Odoo's own HTML 400/415 (bad body, wrong content type): not an answer to pass on.
        expect(() => readJsonRpcAnswer(response, id), capture.file).toThrow(BadUpstreamResponseError);
        continue;
      }
      const read = readJsonRpcAnswer(response, id);
      const captured = asRecord(capture.response.body);
      const kind = 'error' in captured ? 'error' : 'result' in captured ? 'result' : 'none';
      expect(read.kind, capture.file).toBe(kind);
    }
  });

  it('/json/2: each 200 is a result, each JSON 4xx/5xx an ERP error, each HTML 404 a missing route', () => {
    for (const capture of captures.filter((c) => c.request.path.startsWith('/json/2/'))) {
      const response = received(capture);
      const { status } = capture.response;
      const json = headerValue(capture.response.headers, 'content-type')?.startsWith('application/json');
      if (status === 200) expect(readJson2Answer(response).kind, capture.file).toBe('result');
      else if (json) expect(readJson2Answer(response), capture.file).toMatchObject({ kind: 'error', status });
      else if (status === 404) expect(readJson2Answer(response).kind, capture.file).toBe('missing');
      // Odoo's HTML 403 (cookie and header disagree) and 415 (content type): -32005 as before.
      else expect(() => readJson2Answer(response), capture.file).toThrow(BadUpstreamResponseError);
    }
  });
});

describe('/jsonrpc', () => {
  it('a result is passed on as its bytes', () => {
    const read = readJsonRpcAnswer(answer(200, '{"jsonrpc":"2.0","id":7,"result":[1.0, 2]}'), 7);
    expect(read.kind === 'result' && read.json.toString()).toBe('[1.0, 2]');
  });

  it("None: exactly {jsonrpc: '2.0', id: the request's id}, as Odoo 19 answers action_archive", () => {
    expect(readJsonRpcAnswer(answer(200, '{"jsonrpc": "2.0", "id": 23}'), 23)).toEqual({ kind: 'none' });
  });

  it.each([
    ['another id', '{"jsonrpc":"2.0","id":24}'],
    ['the id as a string', '{"jsonrpc":"2.0","id":"23"}'],
    ['no id', '{"jsonrpc":"2.0"}'],
    ['a null id', '{"jsonrpc":"2.0","id":null}'],
    ['another member', '{"jsonrpc":"2.0","id":23,"status":"ok"}'],
    ['error null and no result', '{"jsonrpc":"2.0","id":23,"error":null}'],
  ])('neither result nor error with %s is not the ERP', (_case, body) => {
    expectNotErp(() => readJsonRpcAnswer(answer(200, body), 23), 200, 'application/json');
  });

  it('an ERP error: error.data names the exception', () => {
    const body = {
      jsonrpc: '2.0',
      id: 1,
      error: {
        code: 0,
        message: 'Odoo Server Error',
        data: { name: 'odoo.exceptions.UserError', message: 'x' },
      },
    };
    expect(readJsonRpcAnswer(answer(200, JSON.stringify(body)), 1)).toEqual({
      kind: 'error',
      error: body.error,
      data: body.error.data,
    });
  });

  it.each([
    ['a generic JSON-RPC error (no data)', { code: -32603, message: 'Internal error' }],
    ['data that is a string', { code: 200, message: 'Odoo Server Error', data: 'boom' }],
    ['data without name', { code: 0, message: 'Odoo Server Error', data: { message: 'x' } }],
    ['a name that is not a string', { code: 0, message: 'x', data: { name: 42, message: 'x' } }],
    ['an error that is a string', 'boom'],
    ['an error that is an array', []],
  ])('%s is not the ERP', (_case, error) => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, error });
    const thrownError = thrown(() => readJsonRpcAnswer(answer(200, body), 1));
    expect(thrownError).toBeInstanceOf(BadUpstreamResponseError);
    expect(thrownError.message).toContain('HTTP 200 application/json');
    expect(thrownError.message).toContain("without the ERP's exception name");
  });

  it.each([
    [404, '{"message":"Not Found"}', 'application/json'],
    [404, '<html><title>404 Not Found</title></html>', 'text/html'],
  ])('HTTP %s is JsonRpcMissingError, naming status and type', (status, body, type) => {
    const error = thrown(() => readJsonRpcAnswer(answer(status, body, type), 1));
    expect(error).toBeInstanceOf(JsonRpcMissingError);
    expect((error as JsonRpcMissingError).answer).toContain(`HTTP ${status} ${type}`);
  });

  it.each([
    [401, '{"message":"Unauthorized"}', 'application/json'],
    [500, '{"error":"boom"}', 'application/json'],
    [
      500,
      '{"jsonrpc":"2.0","id":1,"error":{"code":0,"message":"x","data":{"name":"x"}}}',
      'application/json',
    ],
    [200, '{"status":"ok"}', 'application/json'],
    [200, '<!doctype html><title>Portal</title>', 'text/html'],
    [200, '[1,2]', 'application/json'],
  ])('HTTP %s %s is -32005', (status, body, type) => {
    expectNotErp(() => readJsonRpcAnswer(answer(status, body, type), 1), status, type);
  });

  it('says when there is no content type', () => {
    expectNotErp(() => readJsonRpcAnswer(answer(500, 'oops', null), 1), 500, 'no content type');
  });

  it.each([
    [503, UpstreamUnavailableError],
    [429, UpstreamUnavailableError],
    [502, UpstreamUnavailableError],
    [504, UpstreamTimeoutError],
  ])("keeps the front proxy's more specific code for %s", (status, kind) => {
    expect(thrown(() => readJsonRpcAnswer(answer(status, '{"message":"x"}'), 1))).toBeInstanceOf(kind);
  });
});

describe('JSON-2', () => {
  it('200: any JSON is the result', () => {
    for (const body of ['null', '[1]', '"text"', '{"status":"ok"}']) {
      expect(readJson2Answer(answer(200, body)).kind).toBe('result');
    }
  });

  it.each([401, 403, 404, 409, 422, 500])('%s with string name and message is the ERP error', (status) => {
    const body = {
      name: 'werkzeug.exceptions.Unauthorized',
      message: 'Invalid apikey',
      arguments: [],
      context: {},
    };
    expect(readJson2Answer(answer(status, JSON.stringify(body)))).toEqual({ kind: 'error', status, body });
  });

  it.each([
    [401, '{"message":"Unauthorized"}'],
    [403, '{"message":"Missing Authentication Token"}'],
    [404, '{"message":"Not Found"}'],
    [404, '{"name":"x"}'],
    [500, '{"error":"boom"}'],
    [500, '{"name":"x","message":42}'],
    [401, '"Invalid apikey"'],
    [500, '[]'],
    [400, '<html><title>Bad Request</title></html>'],
  ])('%s %s is -32005', (status, body) => {
    expectNotErp(() => readJson2Answer(answer(status, body)), status, 'application/json');
  });

  it.each([
    ['an HTML page (Odoo 16-18)', '<html><title>404 Not Found</title></html>', 'text/html', false],
    ["Odoo 19's no-database page", '<p>No database is selected and ...</p>', 'text/html', true],
    ['a bare JSON string', '"Not Found"', 'application/json', false],
    ['an empty body', '', 'text/plain', false],
  ])('404 with %s (not a JSON object) is a missing route: -32006', (_case, body, type, noDatabase) => {
    expect(readJson2Answer(answer(404, body, type))).toEqual({ kind: 'missing', noDatabase });
  });
});

describe('/web/version', () => {
  it("is the ERP's version only with the specification's shape", () => {
    expect(
      readWebVersionAnswer(answer(200, '{"version_info":[19,0,0,"final",0,""],"version":"19.0"}')),
    ).toEqual({
      version_info: [19, 0, 0, 'final', 0, ''],
      version: '19.0',
    });
    expect(readWebVersionAnswer(answer(200, '{"status":"ok"}'))).toBeUndefined();
    expect(
      readWebVersionAnswer(answer(404, '{"version_info":[19,0,0,"final",0,""],"version":"19"}')),
    ).toBeUndefined();
  });
});

describe("property: nothing without Odoo's error shape passes as an ERP error", () => {
  const errorStatus = fc.integer({ min: 400, max: 599 }).filter((s) => ![429, 502, 503, 504].includes(s));
  const odooShaped = (value: unknown): boolean =>
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as Record<string, unknown>).name === 'string' &&
    typeof (value as Record<string, unknown>).message === 'string';

  it('JSON-2: a 4xx/5xx is an ERP error exactly when its body is an object with string name and message', () => {
    fc.assert(
      fc.property(errorStatus, fc.jsonValue({ maxDepth: 3 }), (status, value) => {
        const response = answer(status, JSON.stringify(value));
        let kind: string;
        try {
          kind = readJson2Answer(response).kind;
        } catch (error) {
          expect(error).toBeInstanceOf(BadUpstreamResponseError);
          kind = 'not_erp';
        }
        const object = typeof value === 'object' && value !== null && !Array.isArray(value);
        const want = odooShaped(value) ? 'error' : status === 404 && !object ? 'missing' : 'not_erp';
        expect(kind).toBe(want);
      }),
    );
  });

  it("/jsonrpc: an error is the ERP's exactly when error.data has a string name", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), (error) => {
        fc.pre(error !== null);
        const response = answer(200, JSON.stringify({ jsonrpc: '2.0', id: 1, error }));
        const data = typeof error === 'object' && !Array.isArray(error) ? error?.data : undefined;
        const named =
          typeof data === 'object' && data !== null && !Array.isArray(data) && typeof data.name === 'string';
        if (named) expect(readJsonRpcAnswer(response, 1).kind).toBe('error');
        else expect(() => readJsonRpcAnswer(response, 1)).toThrow(BadUpstreamResponseError);
      }),
    );
  });
});

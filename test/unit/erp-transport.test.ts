/**
 * What both upstream protocols share: building the upstream URL under a base that may carry a
 * path prefix, classifying answers from the path to the ERP (redirects, 429/502/503/504),
 * scrubbing tracebacks and describing a non-ERP answer without echoing it.
 */
import { describe, expect, it } from 'vitest';
import { MAX_ECHOED_CHARS } from '../../lambdas/platform/bounded-text.ts';
import {
  BadUpstreamResponseError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from '../../lambdas/platform/errors.ts';
import {
  classifyGatewayAnswer,
  describeAnswer,
  scrubErrorData,
  upstreamUrl,
} from '../../lambdas/upstream/erp-transport.ts';
import type { UpstreamResponse } from '../../lambdas/upstream/http-client.ts';

function answer(status: number, headers: Record<string, string> = {}, body = ''): UpstreamResponse {
  return { status, headers, body: Buffer.from(body, 'utf8') };
}

describe('upstreamUrl', () => {
  it.each([
    ['https://erp.example.com', '/jsonrpc', 'https://erp.example.com/jsonrpc'],
    ['https://erp.example.com/', '/jsonrpc', 'https://erp.example.com/jsonrpc'],
    ['https://erp.example.com//', '/jsonrpc', 'https://erp.example.com/jsonrpc'],
    ['https://h/odoo', '/jsonrpc', 'https://h/odoo/jsonrpc'],
    ['https://h/odoo/', '/json/2/res.partner/search', 'https://h/odoo/json/2/res.partner/search'],
    ['http://127.0.0.1:8069/a/b/', '/web/version', 'http://127.0.0.1:8069/a/b/web/version'],
  ])('%s + %s → %s', (base, path, expected) => {
    // Act
    const endpoint = upstreamUrl(new URL(base), path);
    // Assess
    expect(`${endpoint.base.origin}${endpoint.path}`).toBe(expected);
  });

  it('drops a query and a fragment of the base', () => {
    const endpoint = upstreamUrl(new URL('https://h/odoo/?db=x#frag'), '/jsonrpc');
    expect(`${endpoint.base.origin}${endpoint.path}`).toBe('https://h/odoo/jsonrpc');
  });

  it('keeps the base URL it was given, unchanged and not copied (parsed once, from the request)', () => {
    const base = new URL('https://h/odoo/');
    const endpoint = upstreamUrl(base, '/jsonrpc');
    expect(endpoint.base).toBe(base);
    expect(base.href).toBe('https://h/odoo/');
  });
});

describe('classifyGatewayAnswer', () => {
  it.each([200, 201, 204, 400, 401, 404, 422, 500])('leaves HTTP %d to the protocol', (status) => {
    expect(classifyGatewayAnswer(answer(status))).toBeUndefined();
  });

  it.each([301, 302, 303, 307, 308])(
    'refuses a %d redirect with -32005, saying where it points',
    (status) => {
      // Prepare
      const response = answer(status, { location: 'https://erp.example.com/jsonrpc' });
      // Act
      const error = classifyGatewayAnswer(response);
      // Assess
      expect(error).toBeInstanceOf(BadUpstreamResponseError);
      expect(error?.code).toBe(-32005);
      expect(error?.message).toContain(`HTTP ${status} to https://erp.example.com/jsonrpc`);
      expect(error?.message).toMatch(/not followed/);
    },
  );

  it('refuses a redirect without Location without inventing a target', () => {
    const error = classifyGatewayAnswer(answer(302));
    expect(error).toBeInstanceOf(BadUpstreamResponseError);
    expect(error?.message).toContain('(HTTP 302)');
    expect(error?.message).not.toContain(' to ');
  });

  it('shortens a very long Location to the characters any echoed name gets', () => {
    const location = `https://erp.example.com/${'x'.repeat(1_000)}`;
    const error = classifyGatewayAnswer(answer(301, { location }));
    expect(error?.message).toContain(`${location.slice(0, MAX_ECHOED_CHARS)}…`);
    expect(error?.message).not.toContain(location.slice(0, MAX_ECHOED_CHARS + 1));
  });

  it.each([429, 503])('answers %d as retryable -32004 and passes Retry-After on', (status) => {
    // Act
    const error = classifyGatewayAnswer(answer(status, { 'retry-after': '30' }));
    // Assess
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error?.code).toBe(-32004);
    expect(error?.httpStatus).toBe(503);
    expect(error?.headers).toEqual({ 'Retry-After': '30' });
    expect(error?.message).toContain(`HTTP ${status}`);
    expect(error?.message).toContain('Retry-After: 30');
    expect(error?.message).toMatch(/did not run/);
  });

  it('passes an HTTP-date Retry-After on', () => {
    const date = 'Wed, 21 Oct 2026 07:28:00 GMT';
    const error = classifyGatewayAnswer(answer(503, { 'retry-after': date }));
    expect(error?.headers['Retry-After']).toBe(date);
  });

  it.each([429, 503])('answers %d without Retry-After with no extra header', (status) => {
    const error = classifyGatewayAnswer(answer(status));
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error?.headers).toEqual({});
    expect(error?.message).not.toContain('Retry-After');
  });

  it.each([
    ['CR/LF', '10\r\nSet-Cookie: session=evil'],
    ['a LF', '10\nX-Evil: 1'],
    ['a NUL', '10\u0000'],
    ['markup', '<script>alert(1)</script>'],
    ['a very long value', '1'.repeat(65)],
    ['an empty value', ''],
  ])('does not pass on a Retry-After with %s', (_label, value) => {
    const error = classifyGatewayAnswer(answer(503, { 'retry-after': value }));
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error?.headers).toEqual({});
    expect(error?.message).not.toContain('Set-Cookie');
    expect(error?.message).not.toMatch(/[\r\n]/);
  });

  it('answers 502 from a front proxy as retryable -32004', () => {
    const error = classifyGatewayAnswer(answer(502, { 'retry-after': '5' }));
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error?.code).toBe(-32004);
    expect(error?.headers).toEqual({ 'Retry-After': '5' });
    expect(error?.message).toMatch(/502/);
  });

  it('answers 504 from a front proxy as -32003: the call may have run', () => {
    const error = classifyGatewayAnswer(answer(504, { 'retry-after': '5' }));
    expect(error).toBeInstanceOf(UpstreamTimeoutError);
    expect(error?.code).toBe(-32003);
    expect(error?.httpStatus).toBe(504);
    expect(error?.message).toMatch(/may have run/);
  });
});

describe('scrubErrorData', () => {
  const data = {
    name: 'odoo.exceptions.UserError',
    message: 'no',
    debug: 'Traceback (most recent call last)...',
  };

  it('removes debug when asked to, keeping the rest', () => {
    const scrubbed = scrubErrorData(data, true);
    expect(scrubbed).toEqual({ name: 'odoo.exceptions.UserError', message: 'no' });
    expect(data).toHaveProperty('debug');
  });

  it('keeps debug when not asked to', () => {
    expect(scrubErrorData(data, false)).toBe(data);
  });

  it('leaves data without debug alone', () => {
    const plain = { name: 'x', message: 'y' };
    expect(scrubErrorData(plain, true)).toBe(plain);
  });

  it.each([
    [undefined, null],
    [null, null],
    ['a string', 'a string'],
    [[{ debug: 'x' }], [{ debug: 'x' }]],
    [0, 0],
  ])('leaves non-object data %j as it is (undefined becomes null)', (input, expected) => {
    expect(scrubErrorData(input, true)).toEqual(expected);
  });
});

describe('describeAnswer', () => {
  it('names status, content type and the page title', () => {
    // Prepare
    const html =
      '<html><head><title> 404 Not Found </title></head><body>secret internal page body</body></html>';
    // Act
    const text = describeAnswer(answer(404, { 'content-type': 'text/html; charset=utf-8' }, html));
    // Assess
    expect(text).toBe('HTTP 404 text/html ("404 Not Found")');
    expect(text).not.toContain('secret internal page body');
  });

  it('finds the title case-insensitively', () => {
    const text = describeAnswer(answer(500, { 'content-type': 'text/html' }, '<TITLE>Server Error</TITLE>'));
    expect(text).toBe('HTTP 500 text/html ("Server Error")');
  });

  it('says when there is no content type', () => {
    expect(describeAnswer(answer(500))).toBe('HTTP 500 no content type');
  });

  it('does not echo a body without a title', () => {
    const body = 'x'.repeat(500);
    const text = describeAnswer(answer(200, { 'content-type': 'text/plain' }, body));
    expect(text).toBe('HTTP 200 text/plain');
  });

  it('ignores a title longer than 80 characters', () => {
    const text = describeAnswer(
      answer(502, { 'content-type': 'text/html' }, `<title>${'t'.repeat(81)}</title>`),
    );
    expect(text).toBe('HTTP 502 text/html');
  });

  it('repeats a content type the target chose only as far as any supplied name', () => {
    const type = `application/${'x'.repeat(5_000)}`;
    const text = describeAnswer(answer(404, { 'content-type': type }, '{}'));
    expect(text).toBe(`HTTP 404 ${type.slice(0, MAX_ECHOED_CHARS)}…`);
  });

  it('only looks at the start of a large body', () => {
    const body = `${' '.repeat(5_000)}<title>Late title</title>`;
    const text = describeAnswer(answer(500, { 'content-type': 'text/html' }, body));
    expect(text).toBe('HTTP 500 text/html');
  });
});

import { describe, expect, it } from 'vitest';
import { BadUpstreamResponseError, UpstreamTimeoutError } from '../../lambdas/platform/errors.ts';
import { RedirectAnswerError, TooDeepAnswerError } from '../../lambdas/upstream/erp-transport.ts';
import { hasPath, withPathHint } from '../../lambdas/upstream/path-hint.ts';

const notErp = () =>
  new BadUpstreamResponseError(
    'The target did not answer like an ERP on /odoo/x/jsonrpc (HTTP 400 text/html). Check erp_instance.url.',
  );

describe('withPathHint', () => {
  it('adds the address without the path to a -32005 from a URL with a path, once', () => {
    const hinted = withPathHint(notErp(), new URL('https://erp.example.com/odoo/action-12?menu_id=3#x'));
    expect(hinted).toBeInstanceOf(BadUpstreamResponseError);
    const { message, code } = hinted as BadUpstreamResponseError;
    expect(code).toBe(-32005);
    expect(message).toMatch(
      /^The target did not answer like an ERP .* Check erp_instance\.url\. The URL has a path \(\/odoo\/action-12\);/,
    );
    expect(message).toContain('try https://erp.example.com (');
    expect(message).not.toContain('menu_id');
    expect(withPathHint(hinted, new URL('https://erp.example.com/odoo/action-12'))).toBe(hinted);
  });

  it.each([
    'https://erp.example.com',
    'https://erp.example.com/',
    'https://erp.example.com//',
    'https://erp.example.com/?db=x',
  ])('leaves a URL without a path alone: %s', (url) => {
    const error = notErp();
    expect(withPathHint(error, new URL(url))).toBe(error);
  });

  it('leaves other errors alone: a timeout, an answer nested too deep (JSON: no sign of a wrong URL), a plain Error', () => {
    const url = new URL('https://erp.example.com/odoo');
    for (const error of [new UpstreamTimeoutError('timed out'), new TooDeepAnswerError(), new Error('x')]) {
      expect(withPathHint(error, url)).toBe(error);
    }
  });

  it("replaces a redirect's advice (use the final URL) with the hint, which stands alone", () => {
    const redirect = new RedirectAnswerError(
      'The ERP answered with a redirect (HTTP 303 to /web/database/selector); redirects are not followed.',
    );
    expect(redirect.message).toContain('Use the final URL as erp_instance.url');
    const hinted = withPathHint(
      redirect,
      new URL('https://erp.example.com/odoo'),
    ) as BadUpstreamResponseError;
    expect(hinted.code).toBe(-32005);
    expect(hinted.message).toBe(
      'The ERP answered with a redirect (HTTP 303 to /web/database/selector); redirects are not followed. ' +
        'The URL has a path (/odoo); an ERP answers at its address without one, unless it is served under a prefix: ' +
        "try https://erp.example.com (Odoo 17 and later show https://erp.example.com/odoo/... in the browser's address bar).",
    );
    expect(withPathHint(redirect, new URL('http://erp.example.com'))).toBe(redirect);
  });

  it('keeps the headers and the data of the error it extends', () => {
    const error = new BadUpstreamResponseError('not an ERP', {
      headers: { 'Retry-After': '5' },
      data: { a: 1 },
    });
    const hinted = withPathHint(error, new URL('http://127.0.0.1:8069/web')) as BadUpstreamResponseError;
    expect(hinted.headers).toEqual({ 'Retry-After': '5' });
    expect(hinted.data).toEqual({ a: 1 });
    expect(hinted.cause).toBe(error);
    expect(hinted.message).toContain('try http://127.0.0.1:8069 (');
  });
});

describe('hasPath', () => {
  it.each([
    ['https://erp.example.com', false],
    ['https://erp.example.com/', false],
    ['https://erp.example.com//', false],
    ['https://erp.example.com/odoo/action-12', true],
    ['https://erp.example.com/erp/', true],
  ])('%s: %s', (url, expected) => {
    expect(hasPath(new URL(url))).toBe(expected);
  });
});

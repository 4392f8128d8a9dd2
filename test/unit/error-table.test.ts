/**
 * The error table (`lambdas/platform/error-table.ts`) against the "Proxy errors" table of docs/guide/errors.md
 * and against the error classes: adding an error code touches the table, the class that throws
 * it and the docs row, and these tests fail when one of the three is missing.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type ErrorShape, errorResponse } from '../../lambdas/core/envelope.ts';
import {
  mayHaveRun,
  PROXY_ERROR_ROWS,
  PROXY_ERRORS,
  type ProxyErrorRow,
  serverErrorCodes,
} from '../../lambdas/platform/error-table.ts';
import * as errors from '../../lambdas/platform/errors.ts';

const README = readFileSync(new URL('../../docs/guide/errors.md', import.meta.url), 'utf8');
const README_HEADER = '| code | HTTP | meaning | what to do |';

/** The `code` and `HTTP` cells of every row of the "Proxy errors" table of docs/guide/errors.md. */
function readmeErrorRows(markdown: string): { code: number; httpStatus: number }[] {
  const lines = markdown.split('\n');
  const start = lines.indexOf(README_HEADER);
  if (start === -1) throw new Error(`docs/guide/errors.md has no line "${README_HEADER}"`);
  const rows: { code: number; httpStatus: number }[] = [];
  // Skip the header and the |---| line; the table ends at the first line that is not a row.
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const match = /^\| (-?\d+) \| (\d{3}) \|/.exec(line);
    if (match === null)
      throw new Error(`docs/guide/errors.md "Proxy errors": a row without a code and status: ${line}`);
    rows.push({ code: Number(match[1]), httpStatus: Number(match[2]) });
  }
  return rows;
}

/** A concrete error class: every one takes a message (or a cause, for InternalError) first. */
type ErrorClass = (new (message: string) => errors.ProxyError) & { readonly row: ProxyErrorRow };

/** The concrete error classes exported by `errors.ts`. */
const ERROR_CLASSES: ErrorClass[] = Object.values(errors).flatMap((value): ErrorClass[] =>
  value !== errors.ProxyError && value.prototype instanceof errors.ProxyError ? [value as ErrorClass] : [],
);

function instantiate(errorClass: ErrorClass): errors.ProxyError {
  // A limit's refusal also names its rule and when to retry (README, "Limits").
  if ((errorClass as unknown) === errors.RateLimitedError)
    return new errors.RateLimitedError('a message', { rule: 'key_minute', retryAfterSeconds: 1 });
  // An operator's brake names itself (docs/operators.md, "Stop an agent now").
  if ((errorClass as unknown) === errors.BrakedError)
    return new errors.BrakedError('a message', { brakeId: 'brk_0123456789abcdef' });
  return new errorClass('a message');
}

function state(): ErrorShape {
  return { api: 'v1', envelopeId: 'id-1' };
}

describe('the "Proxy errors" table of docs/guide/errors.md', () => {
  const readme = readmeErrorRows(README);

  it('is found and parsed', () => {
    expect(readme.length).toBeGreaterThan(0);
  });

  it('has one row per code and HTTP status', () => {
    const rows = readme.map((row) => `${row.code} ${row.httpStatus}`);
    expect(new Set(rows).size).toBe(rows.length);
  });

  it.each(PROXY_ERROR_ROWS.map((row) => [row.code, row.httpStatus]))(
    'has a row for %s with HTTP %s',
    (code, httpStatus) => {
      expect(readme).toContainEqual({ code, httpStatus });
    },
  );

  it('lists no code the error table does not know', () => {
    const known = new Set(PROXY_ERROR_ROWS.map((row) => row.code));
    expect(readme.filter((row) => !known.has(row.code))).toEqual([]);
  });
});

describe('the error table', () => {
  it("gives one HTTP status per code, but -32004: 503 from the ERP side, 429 from the proxy's own limits", () => {
    for (const row of PROXY_ERROR_ROWS) {
      if (row === PROXY_ERRORS.rateLimited) continue;
      const first = PROXY_ERROR_ROWS.find((other) => other.code === row.code);
      expect([row.code, row.httpStatus]).toEqual([row.code, first?.httpStatus]);
    }
    expect(PROXY_ERRORS.rateLimited).toMatchObject({ code: -32004, httpStatus: 429, callRan: 'no' });
    expect(PROXY_ERRORS.upstreamUnavailable).toMatchObject({ code: -32004, httpStatus: 503 });
  });

  it('answers only the v2 request-shape error in plain text', () => {
    expect(PROXY_ERROR_ROWS.filter((row) => row.answer === 'text')).toEqual([PROXY_ERRORS.v2RequestShape]);
    expect(PROXY_ERRORS.v2RequestShape).toMatchObject({ code: -32600, httpStatus: 400 });
  });

  it('says whether the call may have run, so whether a retry is safe', () => {
    const ran = (row: ProxyErrorRow): [number, boolean] => [row.code, mayHaveRun(row)];
    expect(ran(PROXY_ERRORS.upstreamTimeout)).toEqual([-32003, true]);
    expect(ran(PROXY_ERRORS.upstreamUnavailable)).toEqual([-32004, false]);
    expect(ran(PROXY_ERRORS.badUpstreamResponse)).toEqual([-32005, true]);
    expect(ran(PROXY_ERRORS.json2Unavailable)).toEqual([-32006, false]);
    expect(ran(PROXY_ERRORS.responseTooLarge)).toEqual([-32009, true]);
    expect(ran(PROXY_ERRORS.internal)).toEqual([-32603, true]);
    for (const row of [
      PROXY_ERRORS.parse,
      PROXY_ERRORS.invalidRequest,
      PROXY_ERRORS.authentication,
      PROXY_ERRORS.license,
      PROXY_ERRORS.missingFunctionName,
      PROXY_ERRORS.invalidV2Target,
      PROXY_ERRORS.targetRefused,
      PROXY_ERRORS.rateLimited,
      PROXY_ERRORS.v2RequestShape,
    ]) {
      expect(ran(row)).toEqual([row.code, false]);
    }
  });

  it('lists the codes answered with 5xx in table order', () => {
    expect(serverErrorCodes()).toEqual([-32003, -32004, -32005, -32006, -32009, -32012, -32603]);
  });

  it('is frozen', () => {
    expect(Object.isFrozen(PROXY_ERRORS)).toBe(true);
    expect(PROXY_ERROR_ROWS.every((row) => Object.isFrozen(row))).toBe(true);
  });
});

describe('the error classes', () => {
  it('cover every row of the table, one class per row', () => {
    const rows = ERROR_CLASSES.map((errorClass) => errorClass.row);
    expect(new Set(rows).size).toBe(rows.length);
    expect(new Set(rows)).toEqual(new Set(PROXY_ERROR_ROWS));
  });

  it.each(ERROR_CLASSES.map((errorClass) => [errorClass.name, errorClass]))(
    '%s takes its code and status from its row',
    (_name, errorClass) => {
      const error = instantiate(errorClass);
      expect(error.row).toBe(errorClass.row);
      expect(error.code).toBe(errorClass.row.code);
      expect(error.httpStatus).toBe(errorClass.row.httpStatus);
      // Own fields, as before the table: the error log line prints them.
      expect(Object.keys(error)).toEqual(expect.arrayContaining(['code', 'httpStatus']));
      expect(Object.keys(error)).not.toContain('row');
    },
  );

  it.each(ERROR_CLASSES.map((errorClass) => [errorClass.name, errorClass]))(
    '%s is answered with its status, as its row says (envelope or plain text)',
    (_name, errorClass) => {
      const { row } = errorClass;
      const { response } = errorResponse(state(), instantiate(errorClass));
      expect(response.statusCode).toBe(row.httpStatus);
      if (row.answer === 'text') {
        expect(response.headers['content-type']).toBe('text/plain; charset=utf-8');
      } else {
        expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(JSON.parse(response.body)).toMatchObject({ id: 'id-1', error: { code: row.code } });
      }
    },
  );

  it("take added headers (a counted call's RateLimit-*) under their own, unless frozen", () => {
    const limited = new errors.RateLimitedError('limited', { retryAfterSeconds: 3 });
    limited.withHeaders({ 'Retry-After': '9', RateLimit: '"key-second";r=0;t=1' });
    expect(limited.headers).toEqual({ 'Retry-After': '3', RateLimit: '"key-second";r=0;t=1' });
    const { response } = errorResponse(
      state(),
      new errors.UpstreamTimeoutError('slow').withHeaders({ RateLimit: 'x' }),
    );
    expect(response.headers.RateLimit).toBe('x');
    const frozen = Object.freeze(new errors.UpstreamTimeoutError('slow'));
    expect(frozen.withHeaders({ RateLimit: 'x' }).headers).toEqual({});
  });
});

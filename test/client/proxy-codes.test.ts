/**
 * The client's copy of the proxy's error codes (`client/src/proxy-codes.ts`) against the proxy's
 * error table (`lambdas/platform/error-table.ts`): the client builds without the server, so it
 * keeps a copy, and this test keeps the copy true. A new code in the table fails here until the
 * client knows whether its calls may have run.
 */
import { describe, expect, it } from 'vitest';
import { PROXY_CODES } from '../../client/src/proxy-codes.ts';
import { mayHaveRun, PROXY_ERROR_ROWS } from '../../lambdas/platform/error-table.ts';

describe("the client's proxy error codes", () => {
  it('are the error table rows: code, HTTP status and whether the call may have run, in order', () => {
    expect(PROXY_CODES).toEqual(
      PROXY_ERROR_ROWS.map((row) => ({
        code: row.code,
        httpStatus: row.httpStatus,
        mayHaveRun: mayHaveRun(row),
      })),
    );
  });
});

/**
 * No infrastructure address in an answer (README, "ERP errors"): an unknown database comes back
 * as the ERP's error (same code and `data.name`) naming the database, never PostgreSQL's host and
 * port, on every path that carries ERP errors: v1 (v1.test.ts, every mode), v2 over `execute_kw`
 * (`ERP_V2_TRANSPORT=auto`), and a tool on `/mcp`. The double answers as the real ERP of each
 * mode does (with the `connection to server at ...` prefix from 17 on, without it on 16).
 */
import { describe, expect, it } from 'vitest';
import type { ErpMode } from '../erp-double/index.ts';
import { type Envelope, USERS, useErpAndProxy } from '../support/fixtures.ts';
import { erpHeaders, toolError, withMcpClient } from '../support/mcp-client.ts';
import { TEST_PROXY_KEY } from '../support/proxy-harness.ts';

const admin = USERS.adminA;
const INFRASTRUCTURE = /connection to server|127\.0\.0\.1|5432|FATAL:/;

describe.each(['16', '17', '18'] as ErpMode[])('an unknown database on ERP %s', (mode) => {
  const { double, proxy } = useErpAndProxy({ mode }, { env: { ERP_V2_TRANSPORT: 'auto' } });

  it("v2 over execute_kw: JSON-2's code 500 and the ERP's exception name, naming the database only", async () => {
    const answer = await proxy.post('/v2/erp/execute', {
      id: `nodb-${mode}`,
      model_id: 'res.partner',
      method: 'search_count',
      kwargs: { domain: [] },
      erp_instance: { url: double.url, db: 'no_such_db', user_id: admin.uid, api_key: admin.apiKey },
    });
    expect(answer.status).toBe(200);
    expect((answer.json as Envelope).error).toMatchObject({
      code: 500,
      message: 'database "no_such_db" does not exist',
      data: { name: 'psycopg2.OperationalError', message: 'database "no_such_db" does not exist' },
    });
    expect(answer.text).not.toMatch(INFRASTRUCTURE);
  });

  it('a tool on /mcp: the ERP source, code and name, and a message a model can act on', async () => {
    const headers = {
      'x-api-key': TEST_PROXY_KEY,
      ...erpHeaders({ url: double.url, db: 'no_such_db', apiKey: admin.apiKey, uid: admin.uid }),
    };
    await withMcpClient(proxy.url, headers, async (client) => {
      const result = await client.callTool({ name: 'search_count', arguments: { model: 'res.partner' } });
      expect(toolError(result)).toMatchObject({
        source: 'erp',
        code: 500,
        name: 'psycopg2.OperationalError',
        message: 'database "no_such_db" does not exist',
      });
      expect(JSON.stringify(result)).not.toMatch(INFRASTRUCTURE);
    });
  });
});

/**
 * OAuth tried locally as the OAuth guide says (docs/guide/oauth.md, "Try it locally"):
 * `npm run oauth:try-out` prints the proxy's settings and the commands from a token to a tool
 * call; run as printed (a shell, curl, `npm start`'s script) against the ERP double, they work,
 * and the start banner says OAuth is on. An identity map the proxy cannot use keeps `npm start`
 * from starting, naming the entry; a 401 names both ways in.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRY_OUT_PORT, tryOutInstructions } from '../../bin/oauth-try-out.ts';
import { RUNTIME_SETTINGS } from '../../lambdas/platform/settings.ts';
import { USERS, useErpDouble } from '../support/fixtures.ts';
import { freePort } from '../support/proxy-harness.ts';
import { type Script, startProcess, startScript } from '../support/scripts.ts';

/** The indented command of a numbered step of the try-out's output (continuation lines joined by the shell). */
function step(printed: string, number: number): string {
  const block = printed.split(/\n(?=\d\. )/).find((part) => part.startsWith(`${number}. `)) ?? '';
  return block
    .split('\n')
    .filter((line) => line.startsWith('  '))
    .join('\n');
}

describe('npm run oauth:try-out, then the printed commands', () => {
  const double = useErpDouble({ mode: '19' });
  let issuer: Script;
  let proxy: Script;
  let printed = '';

  beforeAll(async () => {
    const [issuerPort, proxyPort] = [await freePort(), await freePort()];
    const doublePort = new URL(double.url).port;
    // A port of its own: the default (8790) may be in use by a person's own try-out.
    issuer = await startProcess(
      process.execPath,
      ['--import', 'tsx', 'bin/oauth-try-out.ts', '--port', String(issuerPort)],
      { PORT: String(proxyPort), ERP_DOUBLE_PORT: doublePort },
      /opens the login page in your browser\.\n/,
    );
    printed = issuer.stdout();
    // Step 2 as printed, `npm start` being its script (npm would stand between the test and the pid).
    const start = step(printed, 2).replace(/npm start$/, 'exec node --import tsx bin/serve.ts');
    proxy = await startProcess('bash', ['-c', start], { PROXY_API_KEY: undefined }, /_\/about\n[\s\S]*\n\n$/);
  });
  afterAll(async () => {
    await proxy?.stop();
    await issuer?.stop();
  });

  it('prints the ERP double, the proxy and the token steps for the ports in use', () => {
    expect(step(printed, 1)).toBe(`  ERP_DOUBLE_PORT=${new URL(double.url).port} npm run erp-double`);
    expect(step(printed, 2)).toContain('MCP_OAUTH_ISSUER=http://127.0.0.1:');
    expect(step(printed, 3)).toContain('grant_type=client_credentials');
  });

  it('the banner says OAuth is on, naming the issuer and the audience', () => {
    const issuerUrl = /MCP_OAUTH_ISSUER=(\S+)/.exec(printed)?.[1];
    const audience = /MCP_OAUTH_AUDIENCE=(\S+)/.exec(printed)?.[1];
    expect(proxy.stdout()).toContain(
      `OAuth: on: ${audience} also takes access tokens of ${issuerUrl} for ${audience}`,
    );
  });

  it('a token from the issuer, then a tool call with it, as printed: the ERP answers as the mapped user', async () => {
    double.requests.length = 0;
    const { stdout } = await promisify(execFile)('bash', ['-c', step(printed, 3)]);
    const answer = JSON.parse(stdout) as { result: { isError?: boolean; content: { text: string }[] } };
    expect(answer.result.isError).toBeFalsy();
    expect(JSON.parse(answer.result.content[0]?.text ?? 'null')).toEqual(expect.any(Number));
    // The ERP was called with the map's connection: the admin's key on erp_a, never the token.
    const sent = double.requests.filter((request) => request.path.startsWith('/json/2/'));
    expect(sent.map((request) => request.path)).toEqual(['/json/2/res.partner/search_count']);
    expect(sent[0]?.headers.authorization).toBe(`bearer ${USERS.adminA.apiKey}`);
    expect(sent[0]?.headers['x-odoo-database']).toBe('erp_a');
  });

  it('a request without a credential is 401 naming both ways in', async () => {
    const audience = /MCP_OAUTH_AUDIENCE=(\S+)/.exec(printed)?.[1] ?? '';
    const response = await fetch(audience, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    });
    expect(response.status).toBe(401);
    const message = ((await response.json()) as { error: { message: string } }).error.message;
    expect(message).toMatch(/proxy key.*x-api-key.*Authorization: Bearer <key>/);
    expect(message).toMatch(/OAuth.*access token as Authorization: Bearer <token>/);
  });
});

describe("the OAuth guide's try-out walkthrough (docs/guide/oauth.md)", () => {
  it('is what npm run oauth:try-out prints for the default ports, step by step', () => {
    const readme = readFileSync(new URL('../../docs/guide/oauth.md', import.meta.url), 'utf8');
    const printed = tryOutInstructions({
      issuer: `http://127.0.0.1:${TRY_OUT_PORT}`,
      proxyPort: RUNTIME_SETTINGS.port.schema.parse(undefined),
      erpDoublePort: RUNTIME_SETTINGS.erpDoublePort.schema.parse(undefined),
      adminKey: USERS.adminA.apiKey,
    });
    for (const number of [2, 3]) {
      const commands = step(printed, number).replace(/^ {2}/gm, '');
      expect(readme, `step ${number}`).toContain(`\n\`\`\`\n${commands}\n\`\`\`\n`);
    }
  });
});

describe('an identity map the proxy cannot use', () => {
  const erpKey = 'erp-key-of-the-sales-user-0123456789';
  const map = JSON.stringify({
    identities: [
      {
        name: 'sales',
        match: { claim: 'groups', value: 'sales' },
        erp: { url: 'https://erp.example.com/odoo?db=prod', db: 'prod', user_id: 7, api_key: erpKey },
      },
    ],
  });

  it('keeps npm start from starting, naming the entry and the rule, never the ERP key', async () => {
    const started = startScript(
      'bin/serve.ts',
      {
        PORT: String(await freePort()),
        MCP_OAUTH_ISSUER: 'http://127.0.0.1:9',
        MCP_OAUTH_IDENTITIES: map,
      },
      /_\/about\n/,
    );
    const failure = await started.then(
      async (script) => {
        await script.stop();
        return 'started';
      },
      (error: Error) => error.message,
    );
    expect(failure).toMatch(/exited \(1\) before it was ready/);
    expect(failure).toContain(
      'OAuth identities: identities.0.erp.url (identity "sales"): must be a base URL, without query or fragment',
    );
    expect(failure).not.toContain(erpKey);
    expect(failure).not.toMatch(/x-erp|at .*\.ts:\d+/);
  });

  it('npm run check:identities says so offline (exit 1), and lists a usable map (exit 0)', async () => {
    const run = (input: string) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = execFile(
          process.execPath,
          ['--import', 'tsx', 'bin/check-identities.ts', '-'],
          (error, stdout, stderr) => resolve({ code: error ? (error.code as number) : 0, stdout, stderr }),
        );
        child.stdin?.end(input);
      });
    const bad = await run(map);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('(identity "sales"): must be a base URL, without query or fragment');
    expect(bad.stderr).not.toContain(erpKey);
    const good = await run(map.replace('/odoo?db=prod', '/odoo'));
    expect(good).toMatchObject({ code: 0, stderr: '' });
    expect(good.stdout).toBe(
      '-: 1 identity, usable\n  "sales": groups = "sales" -> https://erp.example.com/odoo db "prod", user 7\n',
    );
  });
});

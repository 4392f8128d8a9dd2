/**
 * @module serve
 * `npm start`: the proxy on this machine, no AWS needed. Configuration comes from the
 * environment (see the README); with no proxy key configured, one is generated and printed once.
 * It prints curls for the address it listens on, aimed at the ERP double (`npm run erp-double`, on
 * `ERP_DOUBLE_PORT`, 8788 by default: no ERP's default port, so a pasted curl never reaches a real
 * ERP by accident) with the double's own admin key, says which state store it keeps its
 * idempotency records and limit counters in and whether limits are on (lambdas/local/banner.ts),
 * and warns when the license is invalid or expires within `LICENSE_WARNING_DAYS`.
 */
import type { AddressInfo } from 'node:net';
import { stopOnSignals } from './npm-parent.ts';

/**
 * What the banner's curls put in `x-api-key` when the key is the operator's (never the key itself):
 * the first key's name when keys are named (`PROXY_API_KEYS`), else the variable that holds it.
 */
function keyPlaceholder(keys: readonly { readonly name: string }[]): string {
  const [first] = keys;
  if (first === undefined) return '<your proxy key>';
  // One plain key is named `default` (platform/config.ts's parseProxyKeys).
  if (keys.length === 1 && first.name === 'default') return '<your PROXY_API_KEY>';
  // The name goes inside a single-quoted shell word: no quote, no line break.
  return `<your proxy key "${first.name.replace(/['\r\n]/g, '')}">`;
}

async function main(): Promise<void> {
  // Loaded here, not statically, so a configuration error prints a message instead of a trace.
  const { getConfig } = await import('../lambdas/platform/config.ts');
  let config: ReturnType<typeof getConfig>;
  try {
    config = getConfig();
  } catch (error) {
    process.stderr.write(`erp-proxy: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
  const { getRuntime } = await import('../lambdas/handlers/runtime.ts');
  const { createLocalServer } = await import('../lambdas/local/server.ts');
  const { licenseWarning } = await import('../lambdas/platform/license-notice.ts');
  const { auditLine, brakesLine, limitsLine, sealLine, stateStoreLine } = await import(
    '../lambdas/local/banner.ts'
  );
  const { startLocalSealer } = await import('../lambdas/handlers/local-sealer.ts');
  // The double's fixed, public test key (test/erp-double/users.ts): the printed curls work as pasted.
  const { ERP_A_ADMIN_KEY } = await import('../test/erp-double/users.ts');
  const erpDoubleUrl = `http://127.0.0.1:${config.erpDoublePort}`;
  const runtime = getRuntime();
  let stopSealer: (() => Promise<void>) | undefined;
  try {
    stopSealer = await startLocalSealer(config, runtime.auditRing, runtime);
  } catch (error) {
    process.stderr.write(
      `erp-proxy: WARNING: the audit sealer could not start (${error instanceof Error ? error.message : String(error)}): nothing is sealed\n`,
    );
  }
  const server = createLocalServer(runtime, {
    onCrash: (error) => runtime.logger.error('local server: handler crashed', { error: error as Error }),
  });

  server.on('error', (error: NodeJS.ErrnoException) => {
    const hint =
      error.code === 'EADDRINUSE' ? ` (port ${config.port} is in use: set PORT to another one)` : '';
    process.stderr.write(
      `erp-proxy: cannot listen on ${config.host}:${config.port}${hint}: ${error.message}\n`,
    );
    process.exit(1);
  });

  /** The license line of the banner; a warning (stderr) first when it is invalid or near its end. */
  const licenseLine = async (): Promise<string> => {
    try {
      const status = await runtime.license.getLicense();
      const warning = licenseWarning(status, config.licenseWarningDays);
      if (warning !== undefined) process.stderr.write(`erp-proxy: WARNING: ${warning}\n`);
      return status.is_valid
        ? `License: ${status.licensee}, valid until ${status.valid_until}`
        : `License: NOT VALID (${status.reason ?? 'unknown reason'})`;
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      process.stderr.write(
        `erp-proxy: WARNING: the license could not be read (${why}): every execute and version call fails until it can be\n`,
      );
      return 'License: could not be read';
    }
  };

  server.listen(config.port, config.host, async () => {
    const { port } = server.address() as AddressInfo;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    const base = `http://${host}:${port}`;
    const key = config.generatedKey ?? keyPlaceholder(config.localKeys);
    const lines = [
      `erp-proxy listening on ${base}`,
      config.generatedKey
        ? `No PROXY_API_KEY was set: generated this proxy key for this run (shown once):\n  ${config.generatedKey}`
        : `Proxy keys: ${config.localKeys.map((k) => k.name).join(', ') || 'from PROXY_KEYS_SECRET_ID'}`,
      `Allowed targets: ${config.allowedTargets.join(', ') || 'any public address'}`,
      stateStoreLine(config),
      limitsLine(config),
      auditLine(config),
      sealLine(config, stopSealer !== undefined),
      await brakesLine(runtime.brakesStore),
      // Read now, before any call is refused for it: what GET /_/license will tell.
      await licenseLine(),
      '',
      `Try it with the ERP double (\`npm run erp-double\` in another terminal listens on ${erpDoubleUrl}, its admin`,
      'user 2 and key below); for your own ERP, put its URL, database, user id and API key in erp_instance',
      '(docs/guide/getting-started.md, "Connect your own Odoo"):',
      `  curl -s ${base}/api/erp/version \\`,
      `    -H 'content-type: application/json' -H 'x-api-key: ${key}' \\`,
      `    -d '{"id":"1","url":"${erpDoubleUrl}"}'`,
      `  curl -s ${base}/api/erp/execute \\`,
      `    -H 'content-type: application/json' -H 'x-api-key: ${key}' \\`,
      `    -d '{"id":"2","action":"search_read","model_id":"res.partner","params":[[]],"keyword":{"fields":["name"],"limit":5},` +
        `"erp_instance":{"url":"${erpDoubleUrl}","db":"erp_a","user_id":2,"api_key":"${ERP_A_ADMIN_KEY}"}}'`,
      `  curl -s ${base}/_/about`,
      '',
      `Agents (MCP): ${base}/mcp, with the proxy key and the x-erp-* headers (docs/guide/mcp.md).`,
      ...(runtime.oauth
        ? [
            `OAuth: on: ${base}/mcp also takes access tokens of ${runtime.oauth.issuers.join(', ')} for ${runtime.oauth.resource} (docs/guide/oauth.md).`,
          ]
        : []),
      '',
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  });

  stopOnSignals(
    'start',
    async () => {
      await Promise.all([new Promise((closed) => server.close(closed)), stopSealer?.()]);
    },
    2_000,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`erp-proxy: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

/**
 * @module serve
 * `npm start`: the proxy on this machine, no AWS needed. Configuration comes from the
 * environment (see the README); with no proxy key configured, one is generated and printed once.
 */
import type { AddressInfo } from 'node:net';

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
  const runtime = getRuntime();
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

  server.listen(config.port, config.host, () => {
    const { port } = server.address() as AddressInfo;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    const base = `http://${host}:${port}`;
    const key = config.generatedKey ?? '<your PROXY_API_KEY>';
    const lines = [
      `erp-proxy listening on ${base}`,
      config.generatedKey
        ? `No PROXY_API_KEY was set: generated this proxy key for this run (shown once):\n  ${config.generatedKey}`
        : `Proxy keys: ${config.localKeys.map((k) => k.name).join(', ') || 'from PROXY_KEYS_SECRET_ID'}`,
      `Allowed targets: ${config.allowedTargets.join(', ') || 'any public address'}`,
      '',
      'Try it (replace the erp_instance values with your ERP):',
      `  curl -s ${base}/api/erp/execute \\`,
      `    -H 'content-type: application/json' -H 'x-api-key: ${key}' \\`,
      `    -d '{"id":"1","action":"search_read","model_id":"res.partner","params":[[]],"keyword":{"fields":["name"],"limit":5},` +
        `"erp_instance":{"url":"http://127.0.0.1:8069","db":"mydb","user_id":2,"api_key":"<ERP_USER_API_KEY>"}}'`,
      `  curl -s ${base}/_/about`,
      '',
      `Agents (MCP): ${base}/mcp, with the proxy key and the x-erp-* headers (README, "Agents (MCP)").`,
      '',
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  });

  const stop = (): void => {
    server.close(() => process.exit(0));
    setTimeout(() => process.exit(0), 2_000).unref();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`erp-proxy: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

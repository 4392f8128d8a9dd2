/**
 * @module oauth-try-out
 * `npm run oauth:try-out`: a development authorization server on loopback, to try `/mcp` with
 * OAuth without an identity provider of one's own (README, "Remote agents with OAuth", "Try it
 * locally"). It is `oidc-provider` (the certified Node implementation, the one the tests sign
 * people in with: test/support/oidc-issuer.ts builds its provider here) issuing JWT access tokens
 * for the proxy's `/mcp` (RFC 8707 resource indicators), with:
 * - a login page that accepts any name and password (the name is the person's `sub`), PKCE and
 *   dynamic client registration, as MCP clients use them;
 * - a client for curl, `erp-proxy-try-out` (secret `try-out-secret`), with the client
 *   credentials grant: a token in one command;
 * - `groups: ["try-out"]` in every access token, which the printed identity map maps to the ERP
 *   double's admin user.
 *
 * It prints the settings to start the proxy with and the commands from a token to a tool call.
 * Development only: it keeps everything in memory, its keys are made at each start, and anyone
 * on this machine can sign in. `--port` (default 8790) is its own port; `PORT` and
 * `ERP_DOUBLE_PORT`, as `npm start` reads them, say where the proxy and the ERP double listen;
 * `--help` prints the options ({@link TRY_OUT_USAGE}). Under npm, it stops when npm goes
 * (bin/npm-parent.ts), as `npm start` does.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { type ClientMetadata } from 'oidc-provider';
import { stopOnSignals } from './npm-parent.ts';

/** The try-out's client for curl (client credentials); public: this issuer is for development only. */
export const TRY_OUT_CLIENT = Object.freeze({ id: 'erp-proxy-try-out', secret: 'try-out-secret' });
/** The group every access token of the try-out carries. */
export const TRY_OUT_GROUP = 'try-out';
/** The issuer's default port (the proxy is on 8787, the ERP double on 8788). */
export const TRY_OUT_PORT = 8790;

export interface DevProviderOptions {
  /** The claims of a person's access tokens (`groups`...), by account id; `undefined`: no such account. */
  readonly claimsOf: (accountId: string) => Record<string, unknown> | undefined;
  /** Claims of every access token, a client's own (client credentials) included. */
  readonly tokenClaims?: Record<string, unknown>;
  /** Scopes the resource server offers (granted as asked). */
  readonly scopes?: readonly string[];
  /** Access token lifetime in seconds. */
  readonly accessTokenTtl?: number;
  /** Clients registered up front (dynamic registration stays open). */
  readonly clients?: readonly ClientMetadata[];
}

/**
 * An `oidc-provider` for `issuer` (an http://127.0.0.1 address): JWT access tokens (ES256) for a
 * resource indicator, PKCE required, dynamic registration and the development login on, the
 * client credentials grant for the clients given.
 */
export async function createDevProvider(issuer: string, options: DevProviderOptions): Promise<Provider> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: 'dev-1', alg: 'ES256', use: 'sig' };
  const scopes = (options.scopes ?? ['erp.read', 'erp.write']).join(' ');
  const provider = new Provider(issuer, {
    jwks: { keys: [signingKey] },
    scopes: ['openid', 'offline_access', ...scopes.split(' ')],
    pkce: { required: () => true },
    clients: [...(options.clients ?? [])],
    clientDefaults: {
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      id_token_signed_response_alg: 'ES256',
    },
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, _client, oneOf) => oneOf?.[0],
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resourceIndicator: string) => ({
          scope: scopes,
          audience: resourceIndicator,
          accessTokenTTL: options.accessTokenTtl ?? 300,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        }),
      },
    },
    findAccount: (_ctx: unknown, id: string) => {
      const claims = options.claimsOf(id);
      return claims ? { accountId: id, claims: () => ({ sub: id, ...claims }) } : undefined;
    },
    extraTokenClaims: (_ctx, token) => {
      const accountId = 'accountId' in token ? token.accountId : undefined;
      return { ...options.tokenClaims, ...(accountId ? (options.claimsOf(accountId) ?? {}) : {}) };
    },
  });
  // Loopback over http: oidc-provider allows it for development, as the MCP spec allows localhost.
  provider.proxy = false;
  return provider;
}

/** A provider listening on 127.0.0.1 (`port` 0: any free port); its issuer is its address. */
export async function listenDevIssuer(
  port: number,
  options: DevProviderOptions,
): Promise<{ readonly issuer: string; readonly server: Server; close(): Promise<void> }> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = await createDevProvider(issuer, options);
  server.on('request', provider.callback());
  return { issuer, server, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** The try-out's lines: the proxy's settings, then a token and a tool call, with these addresses. */
export function tryOutInstructions(where: {
  readonly issuer: string;
  readonly proxyPort: number;
  readonly erpDoublePort: number;
  readonly adminKey: string;
}): string {
  const { issuer, proxyPort, erpDoublePort, adminKey } = where;
  const erpDouble = `http://127.0.0.1:${erpDoublePort}`;
  const resource = `http://127.0.0.1:${proxyPort}/mcp`;
  const identities = JSON.stringify({
    identities: [
      {
        name: TRY_OUT_GROUP,
        match: { claim: 'groups', value: TRY_OUT_GROUP },
        erp: { url: erpDouble, db: 'erp_a', user_id: 2, api_key: adminKey },
      },
    ],
  });
  return [
    `Development authorization server (issuer) on ${issuer}: any name and password signs in.`,
    '',
    '1. The ERP double, if it is not running, in another terminal:',
    `  ERP_DOUBLE_PORT=${erpDoublePort} npm run erp-double`,
    '',
    '2. The proxy with OAuth on, in another terminal:',
    `  MCP_OAUTH_ISSUER=${issuer} MCP_OAUTH_AUDIENCE=${resource} \\`,
    `  MCP_OAUTH_IDENTITIES='${identities}' \\`,
    `  PORT=${proxyPort} npm start`,
    '',
    `3. An access token for ${resource} (the client credentials of the try-out client), then a tool call with it:`,
    `  TOKEN=$(curl -s ${issuer}/token -u ${TRY_OUT_CLIENT.id}:${TRY_OUT_CLIENT.secret} \\`,
    `    -d grant_type=client_credentials -d 'scope=erp.read erp.write' -d resource=${resource} \\`,
    `    | node -pe 'JSON.parse(require("fs").readFileSync(0, "utf8")).access_token')`,
    `  curl -s ${resource} -H "authorization: Bearer $TOKEN" \\`,
    `    -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \\`,
    `    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_count","arguments":{"model":"res.partner"}}}'`,
    '',
    `An MCP client that follows MCP's authorization (MCP Inspector, a connector) can use ${resource}`,
    'instead: it registers itself here and opens the login page in your browser.',
    '',
  ].join('\n');
}

/** What `npm run oauth:try-out -- --help` prints. */
export const TRY_OUT_USAGE = [
  'Usage: npm run oauth:try-out [-- --port <port>]',
  '',
  'A development authorization server on 127.0.0.1, to try /mcp with OAuth: any name and password',
  'signs in. It prints the settings to start the proxy with, and the commands from a token to a',
  'tool call. Development only: everything is in memory, and its keys are made at each start.',
  '',
  'Options:',
  `  --port <port>  the port it listens on (default ${TRY_OUT_PORT}; 0: any free port)`,
  '  --help         print this and exit',
  '',
  'Environment: PORT and ERP_DOUBLE_PORT, as `npm start` and `npm run erp-double` read them, say',
  'where the proxy and the ERP double listen in the printed commands.',
  '',
].join('\n');

/** The command line: the port to listen on, the usage asked for, or what is wrong with it. */
export function tryOutOptions(
  argv: readonly string[],
): { readonly port: number } | { readonly help: true } | { readonly problem: string } {
  let values: { port?: string | undefined; help?: boolean | undefined };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: { port: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error) };
  }
  if (values.help) return { help: true };
  const portText = values.port ?? String(TRY_OUT_PORT);
  const port = Number(portText);
  if (!/^\d{1,5}$/.test(portText) || port > 65_535) {
    return { problem: `--port must be a port number, not ${JSON.stringify(portText)}` };
  }
  return { port };
}

async function main(argv: readonly string[]): Promise<void> {
  const options = tryOutOptions(argv);
  if ('help' in options) {
    process.stdout.write(TRY_OUT_USAGE);
    return;
  }
  if ('problem' in options) {
    process.stderr.write(`oauth:try-out: ${options.problem}\n\n${TRY_OUT_USAGE}`);
    process.exit(2);
  }
  const { port } = options;
  const { RUNTIME_SETTINGS } = await import('../lambdas/platform/settings.ts');
  const proxyPort = RUNTIME_SETTINGS.port.schema.parse(process.env.PORT);
  // The double's fixed, public test key (test/erp-double/users.ts), as `npm start`'s curls use it.
  const { ERP_A_ADMIN_KEY } = await import('../test/erp-double/users.ts');
  const erpDoublePort = RUNTIME_SETTINGS.erpDoublePort.schema.parse(process.env.ERP_DOUBLE_PORT);
  let issuer: Awaited<ReturnType<typeof listenDevIssuer>>;
  try {
    issuer = await listenDevIssuer(port, {
      claimsOf: () => ({}),
      tokenClaims: { groups: [TRY_OUT_GROUP] },
      accessTokenTtl: 3600,
      clients: [
        {
          client_id: TRY_OUT_CLIENT.id,
          client_secret: TRY_OUT_CLIENT.secret,
          grant_types: ['client_credentials'],
          redirect_uris: [],
          response_types: [],
          token_endpoint_auth_method: 'client_secret_basic',
        },
      ],
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    process.stderr.write(
      `oauth:try-out: cannot listen on 127.0.0.1:${port}${code === 'EADDRINUSE' ? ' (in use: pass --port <another>)' : ''}\n`,
    );
    process.exit(1);
  }
  // Armed before the ready text: whoever waits for it may stop npm at once.
  stopOnSignals('oauth:try-out', () => {
    issuer.server.closeAllConnections();
    return issuer.close();
  });
  process.stdout.write(
    tryOutInstructions({ issuer: issuer.issuer, proxyPort, erpDoublePort, adminKey: ERP_A_ADMIN_KEY }),
  );
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  await main(process.argv.slice(2));
}

/**
 * @module proxy-function
 * One Lambda function of the service: a `NodejsFunction` bundled locally by esbuild (never in
 * Docker), with its own log group (so retention is ours) and its own role that may write to that
 * log group and nothing else until the stack grants more.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { ISecurityGroup, ISubnet, IVpc } from 'aws-cdk-lib/aws-ec2';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, SourceMapMode } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { BuildOptions } from 'esbuild';
import type { FunctionName } from '../lambdas/platform/names.ts';
import { acknowledge } from './nag.ts';
import { secretsExtension } from './secrets-extension.ts';

/**
 * How the secrets and log groups are kept: on a delete or a replacement (CloudFormation
 * `DeletionPolicy: RetainExceptOnCreate`, `UpdateReplacePolicy: Retain`), but not when the create
 * that made them rolls back, so a failed first deploy leaves nothing billed behind.
 */
export const KEPT_UNLESS_CREATE_FAILS = RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE;

/** Node 24 is the newest LTS line Lambda and this CDK version offer (cdk-nag L1 checks it too). */
export const FUNCTION_RUNTIME = Runtime.NODEJS_24_X;
export const ESBUILD_TARGET = 'node24';

/** Every function runs on Graviton (arm64); the extension's layer is chosen for it. */
export const FUNCTION_ARCHITECTURE = Architecture.ARM_64;

/**
 * Bundled CommonJS dependencies may call `require` for Node built-ins, which an
 * ES module does not have; esbuild's shim uses a global `require` when one exists.
 */
export const REQUIRE_SHIM =
  "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);";

const SHIM_DIR = fileURLToPath(new URL('../lambdas/platform/shims/node/', import.meta.url));

/**
 * The Node built-ins the function bundles never import as ES modules: esbuild's `alias` sends
 * `import { createHash } from 'node:crypto'` (in our code or a dependency's) to a shim,
 * lambdas/platform/shims/node/crypto.ts, that reads the names the bundles use from Node's own
 * module object (`process.getBuiltinModule`). One file per built-in (`dns-promises.ts` for
 * `node:dns/promises`): the one place to add one.
 *
 * Why: Node 24 (Lambda's runtime) builds an ES module import's namespace by reading every export
 * of the built-in, its lazy ones too, and these are the built-ins where that loads modules the
 * module object does not: `node:fs` (its `promises`, which loads `readline` and the REPL's
 * history: 14 modules), `node:crypto` (`webcrypto`), `node:net` and `node:dns` (the block list),
 * `node:timers`. 85 internal modules at the import of each bundle became 66 (BENCHMARKS.md,
 * "Cold starts on Node 24"). The subpaths of an aliased built-in need their own file (esbuild's
 * alias covers `node:fs/...` too). test/infra/bundle.test.ts fails when a bundle still imports one
 * of these as an ES module.
 */
export const NODE_BUILTIN_SHIMS: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries(
    readdirSync(SHIM_DIR)
      .filter((file) => file.endsWith('.ts'))
      .map((file) => [`node:${file.slice(0, -'.ts'.length).replace('-', '/')}`, join(SHIM_DIR, file)]),
  ),
);

/**
 * Packages shipped with a function, each bundled (tree-shaken to what the code uses, minified)
 * into `node_modules/<package>/index.mjs` beside the handler, and external to the handler's own
 * bundle (`BUNDLE.external`). The handler keeps importing the package by name, lazily, on the first
 * call that needs it; Node finds this copy first. A cold start that does not need it neither reads
 * nor compiles it:
 * - `@aws-sdk/client-cloudwatch`: the aux function's `GET /_/metrics`. Before the Lambda runtime's
 *   own SDK, so production runs the version of package-lock.json that the tests ran.
 * - `jose`: the mcp function's first access token (OAuth). Inside the mcp bundle, 62 KB of it cost
 *   about 8 ms of every import on Node 24 (BENCHMARKS.md, "Cold starts on Node 24"), OAuth or not.
 */
export const VENDORED = Object.freeze({
  '@aws-sdk/client-cloudwatch': 'lambdas/platform/aws/sdk/client-cloudwatch.ts',
  jose: 'lambdas/protocol/oauth/vendored-jose.ts',
} as const);

export type VendoredPackage = keyof typeof VENDORED;

/**
 * The packages each function ships ({@link VENDORED}): aux its CloudWatch client, mcp jose. The
 * stack, the bundle test, the benchmarks and `bin/function-bundles.ts` read it.
 */
export const FUNCTION_VENDORED: Readonly<Partial<Record<FunctionName, readonly VendoredPackage[]>>> =
  Object.freeze({
    aux: Object.freeze(['@aws-sdk/client-cloudwatch'] as const),
    mcp: Object.freeze(['jose'] as const),
  });

/**
 * How every function is bundled. The stack uses it, and so do the bundle test and the cold-start
 * benchmark (through {@link esbuildOptions}), so they test and measure what is deployed.
 */
export const BUNDLE = Object.freeze({
  target: ESBUILD_TARGET,
  minify: true,
  // The map names files and lines; the sources themselves stay out of the zip.
  sourcesContent: false,
  mainFields: Object.freeze(['module', 'main']),
  // Never in the handler bundle: inlined, even behind a dynamic import(), the CloudWatch client
  // added about 50 ms to every cold start here (350 KB more to load). The functions read their
  // secrets through the Parameters and Secrets extension (no SDK); the one client they use, the
  // aux function's CloudWatch, comes as its own file (VENDORED), loaded on first use.
  // The vendored packages too (VENDORED): they ship beside the bundle.
  external: Object.freeze([
    '@aws-sdk/*',
    ...Object.keys(VENDORED).filter((pkg) => !pkg.startsWith('@aws-sdk/')),
  ]),
  banner: REQUIRE_SHIM,
  // Middy loads `node:stream/web` for a streaming mode these functions never use: ~7 ms of every
  // cold start. The shim keeps `instanceof ReadableStream` exact without loading it.
  // Built-ins whose ES import loads more than their module object ({@link NODE_BUILTIN_SHIMS}).
  alias: Object.freeze({
    ...NODE_BUILTIN_SHIMS,
    'node:stream/web': fileURLToPath(new URL('../lambdas/platform/shims/stream-web.ts', import.meta.url)),
  }),
  // A name a shim does not have, read from its namespace (`import * as c from 'node:crypto'`,
  // `c.getHashes`), would be `undefined` at run time: esbuild only warns (and in a dependency, only
  // at debug level). An error instead. (A named import of such a name already fails the build.)
  logOverride: Object.freeze({ 'import-is-undefined': 'error' } as const),
});

/**
 * The externals of a function that bundles the AWS SDK ({@link ProxyFunctionProps.awsSdk}): those
 * of {@link BUNDLE} without `@aws-sdk/*`.
 */
export const EXTERNAL_WITH_SDK_BUNDLED: readonly string[] = Object.freeze(
  BUNDLE.external.filter((pkg) => pkg !== '@aws-sdk/*'),
);

/** Where a vendored package goes, relative to the bundle's directory. */
export function vendoredDir(pkg: VendoredPackage): string {
  return `node_modules/${pkg}`;
}

/** The `package.json` of a vendored package: an ES module whose entry is `index.mjs`. */
export function vendoredPackageJson(pkg: VendoredPackage): string {
  return JSON.stringify({ name: pkg, private: true, type: 'module', main: 'index.mjs' });
}

/** esbuild options that build a vendored package's `index.mjs` (entry relative to the root). */
export function vendoredOptions(projectRoot: string, pkg: VendoredPackage, bundleDir: string): BuildOptions {
  return {
    entryPoints: [`${projectRoot}/${VENDORED[pkg]}`],
    outfile: `${bundleDir}/${vendoredDir(pkg)}/index.mjs`,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: BUNDLE.target,
    minify: BUNDLE.minify,
    mainFields: [...BUNDLE.mainFields],
    banner: { js: BUNDLE.banner },
    logLevel: 'warning',
  };
}

/** Single-quotes a word for the shell of the bundling command hooks. */
function shellQuote(word: string): string {
  return `'${word.replace(/'/g, "'\\''")}'`;
}

/** The shell commands (run after bundling) that write one vendored package. */
function vendoredCommands(projectRoot: string, pkg: VendoredPackage, outputDir: string): string[] {
  const options = vendoredOptions(projectRoot, pkg, outputDir);
  const dir = `${outputDir}/${vendoredDir(pkg)}`;
  return [
    `mkdir -p ${shellQuote(dir)}`,
    `printf '%s' ${shellQuote(vendoredPackageJson(pkg))} > ${shellQuote(`${dir}/package.json`)}`,
    [
      shellQuote(`${projectRoot}/node_modules/.bin/esbuild`),
      shellQuote((options.entryPoints as string[])[0] as string),
      '--bundle',
      '--platform=node',
      '--format=esm',
      `--target=${BUNDLE.target}`,
      '--minify',
      `--main-fields=${BUNDLE.mainFields.join(',')}`,
      shellQuote(`--banner:js=${BUNDLE.banner}`),
      shellQuote(`--outfile=${options.outfile}`),
      '--log-level=warning',
    ].join(' '),
  ];
}

/**
 * {@link BUNDLE} as esbuild `build()` options, to bundle a handler the way the stack does (`awsSdk`:
 * as {@link ProxyFunctionProps.awsSdk}).
 */
export function esbuildOptions(entry: string, outfile: string, awsSdk?: 'bundled'): BuildOptions {
  const sdkBundled = awsSdk === 'bundled';
  return {
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: BUNDLE.target,
    minify: BUNDLE.minify,
    sourcemap: true,
    sourcesContent: BUNDLE.sourcesContent,
    mainFields: [...BUNDLE.mainFields],
    external: sdkBundled ? [...EXTERNAL_WITH_SDK_BUNDLED] : [...BUNDLE.external],
    banner: { js: BUNDLE.banner },
    ...(sdkBundled ? {} : { alias: { ...BUNDLE.alias } }),
    logOverride: { ...BUNDLE.logOverride },
    logLevel: 'silent',
  };
}

export interface FunctionVpcPlacement {
  readonly vpc: IVpc;
  readonly subnets: readonly ISubnet[];
  readonly securityGroups: readonly ISecurityGroup[];
}

export interface ProxyFunctionProps {
  readonly description: string;
  /** Absolute path of the handler module (exports `handler`). */
  readonly entry: string;
  /** Absolute path of the project root (holds package-lock.json). */
  readonly projectRoot: string;
  readonly memoryMb: number;
  readonly timeoutSeconds: number;
  readonly environment: Readonly<Record<string, string>>;
  readonly logRetention: RetentionDays;
  /** Reserved concurrency: the most concurrent executions the function may have; undefined: none. */
  readonly reservedConcurrency: number | undefined;
  /** The packages shipped beside the function's bundle, imported on first use ({@link VENDORED}). */
  readonly vendored?: readonly VendoredPackage[];
  readonly vpc?: FunctionVpcPlacement;
  /**
   * Layer version ARN of the AWS Parameters and Secrets Lambda Extension (context
   * `secretsExtensionLayerArn`). Undefined: the pinned table's layer for the stack's region
   * (lib/secrets-extension.ts).
   */
  readonly secretsExtensionLayerArn?: string | undefined;
  /**
   * The role of another function of the stack, to run with exactly its permissions (the deploy's
   * state table check runs with execute-v1's); by default the function has a role of its own.
   */
  readonly role?: Role;
  /** Whether the function reads secrets (the Parameters and Secrets extension); default true. */
  readonly readsSecrets?: boolean;
  /**
   * `bundled`: the AWS SDK clients the handler imports go into its own bundle, tree-shaken, at the
   * version of package-lock.json (the one the tests ran), built without {@link BUNDLE}'s built-in
   * shims, which the SDK's imports of `node:fs` and `node:crypto` do not fit. For a function no
   * request waits for (the audit sealer), whose cold start has no budget to meet. By default
   * `@aws-sdk/*` stays out of the bundle ({@link BUNDLE}).
   */
  readonly awsSdk?: 'bundled';
}

export class ProxyFunction extends Construct {
  readonly function: NodejsFunction;
  readonly logGroup: LogGroup;
  readonly role: Role;

  constructor(scope: Construct, id: string, props: ProxyFunctionProps) {
    super(scope, id);

    // Kept on a delete or replacement (the logs of past requests), not on a rolled-back create.
    this.logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: KEPT_UNLESS_CREATE_FAILS,
    });

    // A role of our own instead of AWSLambdaBasicExecutionRole: that managed policy may write to
    // every log group of the account; this one only to the function's own.
    this.role =
      props.role ??
      new Role(this, 'Role', {
        assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
        description: `erp-proxy ${id} function`,
      });
    this.logGroup.grantWrite(this.role);
    // A role given has its VPC access already, from the function it belongs to.
    if (props.vpc && props.role === undefined) {
      // Network interfaces for the VPC attachment; these EC2 actions take no resource ARNs.
      this.role.addManagedPolicy(
        ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaVPCAccessExecutionRole'),
      );
      acknowledge(
        this.role,
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole]',
        'The AWS-managed policy Lambda documents for VPC attachment: it only manages the network interfaces, ' +
          'whose EC2 actions take no resource ARNs, so a policy of our own would be the same.',
      );
    }

    this.function = new NodejsFunction(this, 'Function', {
      description: props.description,
      entry: props.entry,
      handler: 'handler',
      projectRoot: props.projectRoot,
      depsLockFilePath: `${props.projectRoot}/package-lock.json`,
      runtime: FUNCTION_RUNTIME,
      architecture: FUNCTION_ARCHITECTURE,
      memorySize: props.memoryMb,
      timeout: Duration.seconds(props.timeoutSeconds),
      ...(props.reservedConcurrency === undefined
        ? {}
        : { reservedConcurrentExecutions: props.reservedConcurrency }),
      // The functions read their secrets through this extension (plain HTTP on localhost, no SDK
      // on the path: see lambdas/platform/secrets.ts).
      ...(props.readsSecrets === false
        ? {}
        : {
            paramsAndSecrets: secretsExtension(this, FUNCTION_ARCHITECTURE, props.secretsExtensionLayerArn),
          }),
      role: this.role,
      logGroup: this.logGroup,
      // No NODE_OPTIONS=--enable-source-maps: it reads each map at import (~10 ms of every cold
      // start); the request log maps a logged stack itself, when there is one
      // (lambdas/platform/stack-trace.ts).
      environment: { ...props.environment },
      ...(props.vpc
        ? {
            vpc: props.vpc.vpc,
            vpcSubnets: { subnets: [...props.vpc.subnets] },
            securityGroups: [...props.vpc.securityGroups],
          }
        : {}),
      bundling: {
        format: OutputFormat.ESM,
        target: BUNDLE.target,
        minify: BUNDLE.minify,
        sourceMap: true,
        sourceMapMode: SourceMapMode.DEFAULT,
        sourcesContent: BUNDLE.sourcesContent,
        mainFields: [...BUNDLE.mainFields],
        externalModules: props.awsSdk === 'bundled' ? [...EXTERNAL_WITH_SDK_BUNDLED] : [...BUNDLE.external],
        banner: BUNDLE.banner,
        esbuildArgs: Object.fromEntries([
          ...(props.awsSdk === 'bundled' ? [] : Object.entries(BUNDLE.alias)).map(([from, to]) => [
            `--alias:${from}`,
            to,
          ]),
          ...Object.entries(BUNDLE.logOverride).map(([from, to]) => [`--log-override:${from}`, to]),
        ]),
        forceDockerBundling: false,
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (_inputDir: string, outputDir: string) =>
            (props.vendored ?? []).flatMap((pkg) => vendoredCommands(props.projectRoot, pkg, outputDir)),
        },
      },
    });
  }
}

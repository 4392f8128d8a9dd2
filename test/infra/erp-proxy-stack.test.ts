/**
 * The synthesized template of the erp-proxy stack: routes, functions, grants, secrets, logs and
 * alarms. Bundling is skipped and CloudFormation validation is off, so one synth takes well under
 * a second; each describe block shares one template.
 */
import type { CfnElement } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_READ_OPERATIONS, AUDIT_WRITE_OPERATIONS } from '../../lambdas/platform/audit/audit-record.ts';
import {
  BRAKES_READ_OPERATIONS,
  BRAKES_WRITE_OPERATIONS,
} from '../../lambdas/platform/brakes/brakes-item.ts';
import { LicenseError } from '../../lambdas/platform/errors.ts';
import { LICENSE_CODE } from '../../lambdas/platform/metrics/catalogue.ts';
import { errorCodeDimension } from '../../lambdas/platform/metrics/record.ts';
import { type FunctionName, ROUTES, routeKeys } from '../../lambdas/platform/routes.ts';
import { isLicenseCheckEvent, LICENSE_CHECK_EVENT } from '../../lambdas/platform/scheduled-jobs.ts';
import {
  DEFAULT_MAX_RESPONSE_BYTES,
  RUNTIME_SETTINGS,
  type Setting,
  STATEFUL_FUNCTIONS,
} from '../../lambdas/platform/settings.ts';
import { PARTITION_KEY, STORE_OPERATIONS, TTL_ATTRIBUTE } from '../../lambdas/platform/state/state-store.ts';
import {
  AUDIT_SEALER_OBJECT_ACTIONS,
  type AuditSealing,
  BRAKES_ITEM_CONDITION,
  ErpProxyStack,
  FUNCTION_IDS,
  STATE_TABLE_CHECK_ENTRY,
  STATE_TABLE_CHECK_ROLE_OF,
} from '../../lib/erp-proxy-stack.ts';
import {
  HTTP_API_INTEGRATION_TIMEOUT_SECONDS,
  parseStackConfig,
  StackConfigError,
} from '../../lib/stack-config.ts';
import { testApp } from '../support/cdk-app.ts';
import { EXAMPLE_KEYS_SECRET_ARN, EXAMPLE_LICENSE_SECRET_ARN } from '../support/test-secrets.ts';

const FUNCTION_NAMES = Object.keys(FUNCTION_IDS) as FunctionName[];
/** The deploy's state table check adds two functions: the check and CDK's trigger provider. */
const DEPLOY_CHECK_FUNCTIONS = 2;
/** The audit's sealer (auditSealing on by default: test/infra/audit-seal.test.ts). */
const AUDIT_SEALER_FUNCTIONS = 1;
const SECRET_ARN_PROXY = EXAMPLE_KEYS_SECRET_ARN;
const SECRET_ARN_LICENSE = EXAMPLE_LICENSE_SECRET_ARN;
/** A real Ed25519 public key (SPKI, base64): the synth checks it as the runtime would. */
const LICENSE_PUBLIC_KEY = 'MCowBQYDK2VwAyEAc+y+QGkkayUI0b4Oe1Z82/om+eD0cbnQ+8HXovD6xag=';
const SECRETS_KEY_ARN = 'arn:aws:kms:eu-west-1:123456789012:key/0b7a3c2e-1111-2222-3333-444455556666';

interface Synth {
  readonly stack: ErpProxyStack;
  readonly template: Template;
  /** Logical id of each function's AWS::Lambda::Function. */
  readonly fnIds: Record<FunctionName, string>;
}

function synth(context: Record<string, unknown> = {}): Synth {
  const app = testApp(context);
  const config = parseStackConfig((key) => app.node.tryGetContext(key));
  const stack = new ErpProxyStack(app, 'ErpProxy', { config });
  const template = Template.fromStack(stack);
  const fnIds = Object.fromEntries(
    FUNCTION_NAMES.map((name) => [
      name,
      stack.getLogicalId(stack.functions[name].function.node.defaultChild as CfnElement),
    ]),
  ) as Record<FunctionName, string>;
  return { stack, template, fnIds };
}

type Resource = { Properties: Record<string, unknown> };
type Statement = {
  Sid?: string;
  Action: string | string[];
  Resource: unknown;
  Effect: string;
  Condition?: unknown;
};

function resources(template: Template, type: string): Record<string, Resource> {
  return template.findResources(type) as Record<string, Resource>;
}

function statementsOf(policy: Resource): Statement[] {
  return (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement;
}

function actions(statement: Statement): string[] {
  return Array.isArray(statement.Action) ? statement.Action : [statement.Action];
}

/** A statement's resources, one by one (`@aws-cdk/aws-iam:minimizePolicies` merges statements). */
function resourcesOf(statement: Statement): unknown[] {
  return Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
}

/** Policies attached to a function's role, by the role's logical id. */
function policiesOfRole(template: Template, roleLogicalId: string): Resource[] {
  return Object.values(resources(template, 'AWS::IAM::Policy')).filter((policy) =>
    JSON.stringify(policy.Properties.Roles).includes(`"${roleLogicalId}"`),
  );
}

/** Properties of one resource; fails the test when the resource does not exist. */
function propsOf(template: Template, type: string, logicalId: string): Record<string, unknown> {
  const resource = resources(template, type)[logicalId];
  if (!resource) throw new Error(`no ${type} ${logicalId} in the template`);
  return resource.Properties;
}

function roleOf(template: Template, fnLogicalId: string): string {
  const role = propsOf(template, 'AWS::Lambda::Function', fnLogicalId).Role as {
    'Fn::GetAtt': [string, string];
  };
  return role['Fn::GetAtt'][0];
}

/** The audit sealing of a synth whose context leaves it on (the default). */
function sealingOf(s: Synth): AuditSealing {
  if (!s.stack.auditSealing) throw new Error('auditSealing is off in this synth');
  return s.stack.auditSealing;
}

/**
 * Whether a statement is the audit sealer's grant on the objects of its own bucket (`<bucket>/*`,
 * test/infra/audit-seal.test.ts), in the sealer role's policy: the one wildcard besides
 * cloudwatch:GetMetricData.
 */
function isSealerObjectGrant(s: Synth, policyId: string, statement: Statement): boolean {
  const sealing = sealingOf(s);
  const sealerPolicy = s.stack.getLogicalId(
    sealing.sealer.role.node.findChild('DefaultPolicy').node.defaultChild as CfnElement,
  );
  const bucket = s.stack.getLogicalId(sealing.bucket.node.defaultChild as CfnElement);
  return (
    policyId === sealerPolicy &&
    JSON.stringify(statement.Resource) ===
      JSON.stringify({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucket, 'Arn'] }, '/*']] }) &&
    JSON.stringify([...actions(statement)].sort()) === JSON.stringify([...AUDIT_SEALER_OBJECT_ACTIONS].sort())
  );
}

function envOf(template: Template, fnLogicalId: string): Record<string, unknown> {
  const env = propsOf(template, 'AWS::Lambda::Function', fnLogicalId).Environment as {
    Variables: Record<string, unknown>;
  };
  return env.Variables;
}

describe('default context', () => {
  let s: Synth;
  beforeAll(() => {
    s = synth();
  });

  describe('routes', () => {
    it('creates exactly the routes of the route table, aliases included, and no $default route', () => {
      const keys = Object.values(resources(s.template, 'AWS::ApiGatewayV2::Route')).map(
        (route) => route.Properties.RouteKey,
      );
      expect(keys.sort()).toEqual(ROUTES.flatMap(routeKeys).sort());
      expect(keys).not.toContain('$default');
    });

    it("keeps the specification's nine routes on its four functions, and adds POST /mcp on its own function", () => {
      const routes = Object.values(resources(s.template, 'AWS::ApiGatewayV2::Route'));
      const integrations = resources(s.template, 'AWS::ApiGatewayV2::Integration');
      const fnOf = (key: string) => {
        const target = routes.find((r) => r.Properties.RouteKey === key)?.Properties.Target as {
          'Fn::Join': [string, [string, { Ref: string }]];
        };
        const uri = integrations[target['Fn::Join'][1][1].Ref]?.Properties.IntegrationUri as {
          'Fn::GetAtt': [string, string];
        };
        return Object.entries(s.fnIds).find(([, id]) => id === uri['Fn::GetAtt'][0])?.[0];
      };
      const spec = {
        'POST /api/erp/execute': 'execute-v1',
        'POST /v1/erp/execute': 'execute-v1',
        'POST /api/erp/version': 'version',
        'POST /v1/erp/version': 'version',
        'POST /v2/erp/execute': 'execute-v2',
        'POST /v2/erp/version': 'version',
        'GET /_/license': 'aux',
        'GET /_/about': 'aux',
        'GET /_/metrics': 'aux',
      };
      for (const [key, fn] of Object.entries(spec)) expect(fnOf(key), key).toBe(fn);
      // The audit's records (issue 56), on the aux function.
      expect(fnOf('GET /_/audit')).toBe('aux');
      // The operators' brakes (issue 58), on the aux function.
      for (const key of ['GET /_/brakes', 'POST /_/brakes', 'POST /_/brakes/release'])
        expect(fnOf(key), key).toBe('aux');
      // /mcp: POST, and GET and DELETE only to be answered 405 by the same function.
      for (const key of ['POST /mcp', 'GET /mcp', 'DELETE /mcp']) expect(fnOf(key), key).toBe('mcp');
      // OAuth's protected resource metadata of /mcp (both forms), on the mcp function.
      for (const key of [
        'GET /.well-known/oauth-protected-resource/mcp',
        'GET /.well-known/oauth-protected-resource',
      ])
        expect(fnOf(key), key).toBe('mcp');
      expect(routes).toHaveLength(Object.keys(spec).length + 9);
    });

    it('sends every route to the function the route table names', () => {
      const routes = Object.values(resources(s.template, 'AWS::ApiGatewayV2::Route'));
      const integrations = resources(s.template, 'AWS::ApiGatewayV2::Integration');
      for (const route of ROUTES.flatMap((r) => routeKeys(r).map((key) => ({ ...r, key })))) {
        const cfnRoute = routes.find((r) => r.Properties.RouteKey === route.key);
        const target = cfnRoute?.Properties.Target as { 'Fn::Join': [string, [string, { Ref: string }]] };
        expect(target['Fn::Join'][1][0]).toBe('integrations/');
        const integration = integrations[target['Fn::Join'][1][1].Ref];
        expect(integration?.Properties.IntegrationUri, route.key).toEqual({
          'Fn::GetAtt': [s.fnIds[route.fn], 'Arn'],
        });
      }
    });

    it('uses one Lambda proxy integration per function, payload format 2.0, 30 s', () => {
      s.template.resourceCountIs('AWS::ApiGatewayV2::Integration', FUNCTION_NAMES.length);
      s.template.allResourcesProperties('AWS::ApiGatewayV2::Integration', {
        IntegrationType: 'AWS_PROXY',
        PayloadFormatVersion: '2.0',
        TimeoutInMillis: HTTP_API_INTEGRATION_TIMEOUT_SECONDS * 1000,
      });
    });

    it('lets API Gateway invoke each function only for its own routes', () => {
      const permissions = Object.values(resources(s.template, 'AWS::Lambda::Permission')).filter(
        (permission) => permission.Properties.Principal !== 'events.amazonaws.com',
      );
      expect(permissions).toHaveLength(ROUTES.flatMap(routeKeys).length);
      for (const permission of permissions) {
        expect(permission.Properties.Principal).toBe('apigateway.amazonaws.com');
        expect(JSON.stringify(permission.Properties.SourceArn)).toMatch(
          /\/\*\/\*\/(api|v1|v2|_|mcp|\.well-known)\b/,
        );
      }
    });
  });

  describe('stage', () => {
    it('has one auto-deployed $default stage with throttling and JSON access logs', () => {
      s.template.resourceCountIs('AWS::ApiGatewayV2::Stage', 1);
      s.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
        StageName: '$default',
        AutoDeploy: true,
        DefaultRouteSettings: { ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 },
        AccessLogSettings: {
          DestinationArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^ApiAccessLogs'), 'Arn'] },
          Format: Match.anyValue(),
        },
      });
      const [stageId] = Object.keys(resources(s.template, 'AWS::ApiGatewayV2::Stage'));
      const settings = propsOf(s.template, 'AWS::ApiGatewayV2::Stage', stageId ?? '').AccessLogSettings as {
        Format: string;
      };
      const format = JSON.parse(settings.Format) as Record<string, string>;
      expect(format).toMatchObject({
        requestId: '$context.requestId',
        routeKey: '$context.routeKey',
        status: '$context.status',
        integrationError: '$context.integrationErrorMessage',
      });
    });

    it('keeps every log group for the configured retention (30 days)', () => {
      // Access logs, one per function, the deploy's table check and its trigger provider, the audit sealer.
      s.template.resourceCountIs(
        'AWS::Logs::LogGroup',
        1 + FUNCTION_NAMES.length + DEPLOY_CHECK_FUNCTIONS + AUDIT_SEALER_FUNCTIONS,
      );
      s.template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
      for (const name of FUNCTION_NAMES) {
        const fn = resources(s.template, 'AWS::Lambda::Function')[s.fnIds[name]];
        const ownLogGroup = s.stack.getLogicalId(
          s.stack.functions[name].logGroup.node.defaultChild as CfnElement,
        );
        expect(fn?.Properties.LoggingConfig, name).toEqual({ LogGroup: { Ref: ownLogGroup } });
      }
    });
  });

  describe('functions', () => {
    it("runs five ARM64 functions on Node.js 24 with the esbuild handler (and the deploy check's two and the audit sealer on ARM64 Node.js 24)", () => {
      s.template.resourceCountIs(
        'AWS::Lambda::Function',
        5 + DEPLOY_CHECK_FUNCTIONS + AUDIT_SEALER_FUNCTIONS,
      );
      s.template.allResourcesProperties('AWS::Lambda::Function', {
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
      });
      for (const name of FUNCTION_NAMES) {
        expect(propsOf(s.template, 'AWS::Lambda::Function', s.fnIds[name]).Handler, name).toBe(
          'index.handler',
        );
      }
    });

    it('sizes memory and timeout per function', () => {
      const sizing = (name: FunctionName) => {
        const p = propsOf(s.template, 'AWS::Lambda::Function', s.fnIds[name]);
        return [p.MemorySize, p.Timeout];
      };
      expect(sizing('execute-v1')).toEqual([512, 28]);
      expect(sizing('execute-v2')).toEqual([512, 28]);
      expect(sizing('version')).toEqual([256, 28]);
      expect(sizing('aux')).toEqual([256, 10]);
      expect(sizing('mcp')).toEqual([512, 28]);
    });

    it('gives each function the settings it reads, and only those (the settings catalogue)', () => {
      const wanted = (name: FunctionName) =>
        Object.values(RUNTIME_SETTINGS as Readonly<Record<string, Setting>>)
          .filter(
            (setting) =>
              setting.env !== undefined &&
              setting.readBy.includes(name) &&
              (setting.context !== undefined || setting.notDeployable?.by === 'stack') &&
              // Deployable, but not set and without a default: not written.
              !(
                setting.env === 'LICENSE_PUBLIC_KEY' ||
                setting.env === 'BUILD_COMMIT' ||
                setting.env === 'BUILD_TIME' ||
                // OAuth is off in this context: no audience, no identity-map secret.
                setting.env === 'MCP_OAUTH_AUDIENCE' ||
                setting.env === 'MCP_OAUTH_IDENTITIES_SECRET_ID'
              ),
          )
          .map((setting) => setting.env as string);
      for (const name of FUNCTION_NAMES) {
        const env = envOf(s.template, s.fnIds[name]);
        const ours = Object.keys(env).filter(
          (variable) =>
            variable !== 'NODE_OPTIONS' &&
            !variable.startsWith('PARAMETERS_SECRETS_EXTENSION_') &&
            !variable.startsWith('SECRETS_MANAGER_') &&
            !variable.startsWith('SSM_PARAMETER_STORE_'),
        );
        expect(ours.sort(), name).toEqual(
          wanted(name)
            .filter((v) => v !== 'PARAMETERS_SECRETS_EXTENSION_HTTP_PORT')
            .sort(),
        );
        // No --enable-source-maps: about 10 ms of every cold start (platform/stack-trace.ts maps
        // a logged stack instead).
        expect(env.NODE_OPTIONS, name).toBeUndefined();
        expect(env, name).toMatchObject({
          POWERTOOLS_SERVICE_NAME: 'erp-proxy',
          POWERTOOLS_METRICS_NAMESPACE: 'ErpProxy',
          LOG_LEVEL: 'INFO',
          POWERTOOLS_LOG_LEVEL: 'INFO',
          SECRETS_MAX_AGE: '300',
          PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: '2773',
          PROXY_KEYS_SECRET_ID: { Ref: expect.stringMatching(/^ProxyKeysSecret/) },
          LICENSE_SECRET_ID: { Ref: expect.stringMatching(/^LicenseSecret/) },
        });
        expect(env).not.toHaveProperty('LICENSE_PUBLIC_KEY');
      }
      for (const name of ['execute-v1', 'execute-v2', 'version'] as const) {
        expect(envOf(s.template, s.fnIds[name]), name).toMatchObject({
          ERP_DEFAULT_TIMEOUT: '15',
          ERP_MAX_TIMEOUT: '25',
          ERP_ALLOWED_TARGETS: '',
          ERP_ALLOWED_DATABASES: '',
          MAX_RESPONSE_BYTES: String(DEFAULT_MAX_RESPONSE_BYTES),
        });
      }
      expect(envOf(s.template, s.fnIds.aux)).toMatchObject({
        AUX_PUBLIC: '',
        METRICS_WINDOW_SECONDS: '300',
        METRICS_CACHE_SECONDS: '60',
        ERP_V1_TRANSPORT: 'auto',
        ERP_V2_TRANSPORT: 'json2',
      });
      expect(envOf(s.template, s.fnIds.aux)).not.toHaveProperty('ERP_ALLOWED_TARGETS');
      expect(envOf(s.template, s.fnIds['execute-v1'])).not.toHaveProperty('AUX_PUBLIC');
      expect(envOf(s.template, s.fnIds['execute-v1'])).not.toHaveProperty('ERP_V2_TRANSPORT');
      expect(envOf(s.template, s.fnIds['execute-v2'])).not.toHaveProperty('ERP_V1_TRANSPORT');
      expect(envOf(s.template, s.fnIds.version)).not.toHaveProperty('ERP_V1_TRANSPORT');
    });

    it('lets the proxy answer -32003 before Lambda or API Gateway cut the call off', () => {
      for (const name of ['execute-v1', 'execute-v2', 'version', 'mcp'] as const) {
        const timeout = propsOf(s.template, 'AWS::Lambda::Function', s.fnIds[name]).Timeout as number;
        const maxTimeout = Number(envOf(s.template, s.fnIds[name]).ERP_MAX_TIMEOUT);
        expect(maxTimeout + 2).toBeLessThanOrEqual(timeout);
        expect(timeout).toBeLessThan(HTTP_API_INTEGRATION_TIMEOUT_SECONDS);
      }
    });
  });

  describe('IAM', () => {
    it("has no wildcard resource except for cloudwatch:GetMetricData (and the audit sealer's own bucket's objects)", () => {
      let sealerObjectGrants = 0;
      for (const [id, policy] of Object.entries(resources(s.template, 'AWS::IAM::Policy'))) {
        for (const statement of statementsOf(policy)) {
          if (isSealerObjectGrant(s, id, statement)) {
            sealerObjectGrants += 1;
            continue;
          }
          if (JSON.stringify(statement.Resource).includes('*')) {
            expect(actions(statement), id).toEqual(['cloudwatch:GetMetricData']);
            expect(statement.Resource).toBe('*');
          }
        }
      }
      expect(sealerObjectGrants).toBe(1);
      s.template.resourcePropertiesCountIs(
        'AWS::IAM::Policy',
        {
          PolicyDocument: {
            Statement: Match.arrayWith([Match.objectLike({ Action: 'cloudwatch:GetMetricData' })]),
          },
        },
        1,
      );
    });

    it('uses no managed policies (no AWSLambdaBasicExecutionRole)', () => {
      for (const role of Object.values(resources(s.template, 'AWS::IAM::Role'))) {
        expect(role.Properties.ManagedPolicyArns).toBeUndefined();
      }
    });

    it('lets each function read the two secrets, write its own logs, read the brakes, and nothing more (aux: GetMetricData, the audit reads and the brakes write; execute and mcp: the state table, the audit writes and the digest secret)', () => {
      for (const name of FUNCTION_NAMES) {
        const roleId = roleOf(s.template, s.fnIds[name]);
        const statements = policiesOfRole(s.template, roleId).flatMap(statementsOf);
        const granted = statements.flatMap((st) =>
          actions(st).map((action) => `${action} ${JSON.stringify(st.Resource)}`),
        );
        const secretReads = statements.filter((st) => actions(st).includes('secretsmanager:GetSecretValue'));
        const secretIds = [
          s.stack.licenseSecret,
          s.stack.proxyKeysSecret,
          // The audit digest key: read by the functions that write audit records.
          ...(STATEFUL_FUNCTIONS.includes(name) ? [s.stack.auditDigestSecret] : []),
        ].map((secret) => s.stack.getLogicalId(secret.node.defaultChild as CfnElement));
        expect(
          secretReads
            .flatMap(resourcesOf)
            .map((r) => JSON.stringify(r))
            .sort(),
          name,
        ).toEqual(secretIds.map((id) => JSON.stringify({ Ref: id })).sort());
        // Logs: the function's own log group only.
        const logWrites = statements.filter((st) => actions(st).includes('logs:PutLogEvents'));
        const ownLogGroup = s.stack.getLogicalId(
          s.stack.functions[name].logGroup.node.defaultChild as CfnElement,
        );
        // The deploy's table check runs with execute-v1's role, and logs to a group of its own.
        const checkLogGroup = s.stack.getLogicalId(
          s.stack.stateTableCheck.function.logGroup.node.defaultChild as CfnElement,
        );
        expect(logWrites.flatMap(resourcesOf)).toEqual([
          { 'Fn::GetAtt': [ownLogGroup, 'Arn'] },
          ...(name === STATE_TABLE_CHECK_ROLE_OF ? [{ 'Fn::GetAtt': [checkLogGroup, 'Arn'] }] : []),
        ]);
        const allActions = new Set(statements.flatMap(actions));
        const expected = new Set([
          'logs:CreateLogStream',
          'logs:PutLogEvents',
          'secretsmanager:GetSecretValue',
          'secretsmanager:DescribeSecret',
          ...(name === 'aux' ? ['cloudwatch:GetMetricData'] : []),
          ...(STATEFUL_FUNCTIONS.includes(name) ? STORE_OPERATIONS.map((op) => `dynamodb:${op}`) : []),
          ...(STATEFUL_FUNCTIONS.includes(name) ? AUDIT_WRITE_OPERATIONS.map((op) => `dynamodb:${op}`) : []),
          ...(name === 'aux' ? AUDIT_READ_OPERATIONS.map((op) => `dynamodb:${op}`) : []),
          // The operators' brakes: every function reads them, aux writes them (test/infra/brakes.test.ts).
          ...BRAKES_READ_OPERATIONS.map((op) => `dynamodb:${op}`),
          ...(name === 'aux' ? BRAKES_WRITE_OPERATIONS.map((op) => `dynamodb:${op}`) : []),
        ]);
        expect([...allActions].sort(), `${name}: ${granted.join(', ')}`).toEqual([...expected].sort());
      }
    });
  });

  describe('state table', () => {
    const tableId = () => s.stack.getLogicalId(s.stack.stateTable.node.defaultChild as CfnElement);
    const auditTableId = () => s.stack.getLogicalId(s.stack.auditTable.node.defaultChild as CfnElement);

    it('is one DynamoDB table: on demand, keyed by pk, TTL on expires_at, encrypted at rest', () => {
      // The state table and the audit table (test/infra/audit-table.test.ts).
      s.template.resourceCountIs('AWS::DynamoDB::Table', 2);
      expect(propsOf(s.template, 'AWS::DynamoDB::Table', tableId())).toEqual({
        KeySchema: [{ AttributeName: PARTITION_KEY, KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: PARTITION_KEY, AttributeType: 'S' }],
        BillingMode: 'PAY_PER_REQUEST',
        TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
        SSESpecification: { SSEEnabled: true },
      });
    });

    it('is kept when it leaves the stack or is replaced, not on a rolled-back create', () => {
      expect(s.template.findResources('AWS::DynamoDB::Table')[tableId()]).toMatchObject({
        DeletionPolicy: 'RetainExceptOnCreate',
        UpdateReplacePolicy: 'Retain',
      });
    });

    it('is written by execute-v1, execute-v2 and mcp with exactly the store operations, and otherwise reached for the brakes item only', () => {
      expect([...STATEFUL_FUNCTIONS].sort()).toEqual(['execute-v1', 'execute-v2', 'mcp']);
      const table = { 'Fn::GetAtt': [tableId(), 'Arn'] };
      for (const name of FUNCTION_NAMES) {
        const statements = policiesOfRole(s.template, roleOf(s.template, s.fnIds[name])).flatMap(
          statementsOf,
        );
        const onTable = statements.filter((st) => JSON.stringify(st.Resource).includes(tableId()));
        // The audit table's grants are test/infra/audit-table.test.ts's.
        const dynamo = statements
          .filter((st) => !JSON.stringify(st.Resource).includes(auditTableId()))
          .filter((st) => actions(st).some((action) => action.startsWith('dynamodb:')));
        expect(dynamo, name).toEqual(onTable);
        expect(onTable.flatMap(resourcesOf), name).toEqual(onTable.map(() => table));
        // The brakes' statements (test/infra/brakes.test.ts) name the brakes item alone.
        const brakes = onTable.filter(
          (st) => JSON.stringify(st.Condition) === JSON.stringify(BRAKES_ITEM_CONDITION),
        );
        expect(brakes.flatMap(actions).sort(), name).toEqual(
          [...BRAKES_READ_OPERATIONS, ...(name === 'aux' ? BRAKES_WRITE_OPERATIONS : [])]
            .map((op) => `dynamodb:${op}`)
            .sort(),
        );
        const others = onTable.filter((st) => !brakes.includes(st));
        expect(others.flatMap(actions).sort(), name).toEqual(
          STATEFUL_FUNCTIONS.includes(name) ? STORE_OPERATIONS.map((op) => `dynamodb:${op}`).sort() : [],
        );
      }
    });

    it('has an alarm on its errors and throttles of the store operations', () => {
      const alarm = Object.values(resources(s.template, 'AWS::CloudWatch::Alarm')).find(
        (a) => a.Properties.AlarmName === 'ErpProxy-StateTableErrors',
      );
      const text = JSON.stringify(alarm?.Properties.Metrics);
      for (const operation of STORE_OPERATIONS)
        expect(text).toContain(`{"Name":"Operation","Value":"${operation}"}`);
      expect(text).toContain('SystemErrors');
      expect(text).toContain('ThrottledRequests');
      expect(text).toContain(tableId());
    });

    it('is named to every function: each reads the brakes there (and aux shows it in /_/about)', () => {
      for (const name of FUNCTION_NAMES) {
        expect(envOf(s.template, s.fnIds[name]).STATE_TABLE, name).toEqual({ Ref: tableId() });
      }
    });
  });

  describe('deploy state table check', () => {
    const idOf = (construct: { node: { defaultChild?: unknown } }) =>
      s.stack.getLogicalId(construct.node.defaultChild as CfnElement);
    const checkId = () => idOf(s.stack.stateTableCheck.function.function);
    const triggerOf = () => {
      const triggers = s.template.findResources('Custom::Trigger') as Record<
        string,
        { Properties: Record<string, unknown>; DependsOn: string[] }
      >;
      expect(Object.keys(triggers)).toHaveLength(1);
      return Object.values(triggers)[0] as { Properties: Record<string, unknown>; DependsOn: string[] };
    };

    it('runs the check function, synchronously, at every deploy that changes it', () => {
      const versions = Object.entries(resources(s.template, 'AWS::Lambda::Version')).filter(
        ([, version]) =>
          JSON.stringify(version.Properties.FunctionName) === JSON.stringify({ Ref: checkId() }),
      );
      expect(versions).toHaveLength(1);
      expect(triggerOf().Properties).toMatchObject({
        HandlerArn: { Ref: versions[0]?.[0] },
        InvocationType: 'RequestResponse',
        ExecuteOnHandlerChange: true,
      });
      expect(s.stack.stateTableCheck.function.node.path).toBe('ErpProxy/StateTableCheck');
      expect(STATE_TABLE_CHECK_ENTRY).toBe('lambdas/handlers/state-table-check.ts');
    });

    it('runs after the table and every function, their roles and grants included', () => {
      const after = new Set(triggerOf().DependsOn);
      expect(after.has(idOf(s.stack.stateTable))).toBe(true);
      for (const name of FUNCTION_NAMES) {
        const fn = s.stack.functions[name];
        expect(after.has(s.fnIds[name]), name).toBe(true);
        expect(after.has(idOf(fn.role)), name).toBe(true);
        expect(after.has(idOf(fn.role.node.findChild('DefaultPolicy'))), name).toBe(true);
      }
    });

    it("runs with execute-v1's own role, which holds the table's grants, and reads only STATE_TABLE", () => {
      expect(STATE_TABLE_CHECK_ROLE_OF).toBe('execute-v1');
      expect(roleOf(s.template, checkId())).toBe(roleOf(s.template, s.fnIds['execute-v1']));
      const tableGrants = policiesOfRole(s.template, roleOf(s.template, checkId()))
        .flatMap(statementsOf)
        .filter((st) => JSON.stringify(st.Resource).includes(idOf(s.stack.stateTable)))
        .filter((st) => actions(st).some((action) => action.startsWith('dynamodb:')))
        // Not the brakes item's read (test/infra/brakes.test.ts).
        .filter((st) => JSON.stringify(st.Condition) !== JSON.stringify(BRAKES_ITEM_CONDITION));
      expect(tableGrants.flatMap(actions).sort()).toEqual(
        STORE_OPERATIONS.map((op) => `dynamodb:${op}`).sort(),
      );
      expect(envOf(s.template, checkId())).toEqual({ STATE_TABLE: { Ref: idOf(s.stack.stateTable) } });
      const fn = propsOf(s.template, 'AWS::Lambda::Function', checkId());
      expect(fn.Handler).toBe('index.handler');
      // It reads no secret: no Parameters and Secrets extension.
      expect(fn.Layers).toBeUndefined();
      expect(fn.LoggingConfig).toEqual({
        LogGroup: { Ref: idOf(s.stack.stateTableCheck.function.logGroup) },
      });
    });

    it("holds CDK's trigger provider to the stack's rules: its own kept log group, writing only there, invoking only the check", () => {
      const providers = Object.entries(resources(s.template, 'AWS::Lambda::Function')).filter(([id]) =>
        id.startsWith('AWSCDKTriggerCustomResourceProvider'),
      );
      expect(providers).toHaveLength(1);
      const provider = providers[0]?.[1].Properties as Record<string, unknown>;
      const logGroup = (provider.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
      expect(s.template.toJSON().Resources[logGroup]).toMatchObject({
        Type: 'AWS::Logs::LogGroup',
        Properties: { RetentionInDays: 30 },
      });
      const roleId = (provider.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      const role = resources(s.template, 'AWS::IAM::Role')[roleId]?.Properties as {
        ManagedPolicyArns?: unknown;
        Policies: { PolicyDocument: { Statement: Statement[] } }[];
      };
      expect(role.ManagedPolicyArns).toBeUndefined();
      expect(role.Policies.flatMap((policy) => policy.PolicyDocument.Statement)).toEqual([
        {
          Effect: 'Allow',
          Action: ['lambda:InvokeFunction'],
          Resource: [{ 'Fn::Join': ['', [{ 'Fn::GetAtt': [checkId(), 'Arn'] }, ':*']] }],
        },
        {
          Effect: 'Allow',
          Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          Resource: [{ 'Fn::GetAtt': [logGroup, 'Arn'] }],
        },
      ]);
    });
  });

  describe('secrets', () => {
    it('generates the proxy key as a plain alphanumeric string the runtime accepts', () => {
      // The proxy keys, the license and the audit digest key (test/infra/audit-table.test.ts).
      s.template.resourceCountIs('AWS::SecretsManager::Secret', 3);
      s.template.hasResourceProperties('AWS::SecretsManager::Secret', {
        GenerateSecretString: {
          PasswordLength: 48,
          ExcludePunctuation: true,
          IncludeSpace: false,
          SecretStringTemplate: Match.absent(),
          GenerateStringKey: Match.absent(),
        },
      });
    });

    it('creates a license placeholder that explains how to set the license', () => {
      s.template.hasResourceProperties('AWS::SecretsManager::Secret', {
        SecretString: '{}',
        Description: Match.stringLikeRegexp('put-secret-value'),
      });
    });
  });

  describe('monitoring', () => {
    it('creates the alarms: 5xx rate, upstream timeouts, errors and throttles per function, p99, license', () => {
      const names = Object.values(resources(s.template, 'AWS::CloudWatch::Alarm')).map(
        (a) => a.Properties.AlarmName,
      );
      expect(names.sort()).toEqual(
        [
          'ErpProxy-Api5xxRate',
          'ErpProxy-UpstreamTimeouts',
          'ErpProxy-ApiLatencyP99',
          'ErpProxy-LicenseExpiring',
          'ErpProxy-LicenseRefusals',
          'ErpProxy-LimitsFailedOpen',
          'ErpProxy-StateTableErrors',
          'ErpProxy-AuditWriteFailures',
          // The audit's sealing (test/infra/audit-seal.test.ts).
          'ErpProxy-AuditSealerErrors',
          'ErpProxy-AuditSealLagging',
          'ErpProxy-AuditVerifyFailures',
          // The operators' brakes (test/infra/brakes.test.ts).
          'ErpProxy-BrakeForgotten',
          'ErpProxy-BrakesUnread',
          ...['ExecuteV1', 'ExecuteV2', 'Version', 'Aux', 'Mcp'].flatMap((f) => [
            `ErpProxy-${f}Errors`,
            `ErpProxy-${f}Throttles`,
          ]),
        ].sort(),
      );
      // An idle proxy stays OK; only a sealer that records nothing is a failure.
      for (const alarm of Object.values(resources(s.template, 'AWS::CloudWatch::Alarm'))) {
        expect(alarm.Properties.TreatMissingData, String(alarm.Properties.AlarmName)).toBe(
          alarm.Properties.AlarmName === 'ErpProxy-AuditSealLagging' ? 'breaching' : 'notBreaching',
        );
      }
    });

    it('alarms per ERP whose in-flight cap refused calls in each of 5 minutes, and on limits served without the store', () => {
      const limited = synth({
        targetLimits: { 'erp.example.com': { in_flight: 6 }, '10.0.0.5': { requests: 100, per: 'minute' } },
      });
      const alarms = Object.values(resources(limited.template, 'AWS::CloudWatch::Alarm'));
      // One in-flight alarm: the host with a cap, not the one with a rate only.
      expect(alarms.filter((a) => String(a.Properties.AlarmName).includes('InFlightCap'))).toHaveLength(1);
      limited.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        AlarmName: 'ErpProxy-InFlightCap-erp.example.com',
        MetricName: 'InFlightRefusals',
        Namespace: 'ErpProxy',
        Dimensions: Match.arrayWith([{ Name: 'host', Value: 'erp.example.com' }]),
        Period: 60,
        Statistic: 'Sum',
        EvaluationPeriods: 5,
        DatapointsToAlarm: 5,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
      // The functions that count get the setting as JSON; version never reads it.
      const environments = Object.values(resources(limited.template, 'AWS::Lambda::Function')).map(
        (f) =>
          (f.Properties.Environment as { Variables?: Record<string, string> } | undefined)?.Variables ?? {},
      );
      const withLimits = environments.filter((vars) => 'ERP_TARGET_LIMITS' in vars);
      expect(withLimits).toHaveLength(4);
      expect(JSON.parse(withLimits[0]?.ERP_TARGET_LIMITS ?? '')).toEqual({
        'erp.example.com': { in_flight: 6 },
        '10.0.0.5': { requests: 100, per: 'minute' },
      });
      const failedOpen = alarms.find((a) => a.Properties.AlarmName === 'ErpProxy-LimitsFailedOpen');
      const watched = (
        (failedOpen?.Properties.Metrics ?? []) as { MetricStat?: { Metric: { MetricName: string } } }[]
      ).flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric.MetricName] : []));
      expect(watched).toEqual(Array(3).fill('LimitsFailedOpen'));
    });

    it("says a throttled function hit its own reservation (it never draws on the account's pool)", () => {
      const reservations = { ExecuteV1: 200, ExecuteV2: 200, Version: 20, Aux: 10, Mcp: 20 };
      for (const [key, reserved] of Object.entries(reservations)) {
        const [alarm] = Object.values(
          s.template.findResources('AWS::CloudWatch::Alarm', {
            Properties: { AlarmName: `ErpProxy-${key}Throttles` },
          }),
        ) as Resource[];
        const description = String(alarm?.Properties.AlarmDescription);
        expect(description).toContain(`all ${reserved} executions of its reserved concurrency were busy`);
        expect(description).not.toMatch(/account/);
      }
    });

    it('watches the metric names the runtime emits', () => {
      s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        AlarmName: 'ErpProxy-LicenseExpiring',
        Metrics: [
          Match.objectLike({
            MetricStat: {
              Metric: {
                MetricName: 'LicenseDaysLeft',
                Namespace: 'ErpProxy',
                Dimensions: [{ Name: 'service', Value: 'erp-proxy' }],
              },
              Period: 3600,
              Stat: 'Minimum',
            },
          }),
        ],
        Threshold: 14,
        ComparisonOperator: 'LessThanThreshold',
        // 1 of 2 hours: an hour without the hourly check's record does not turn it OK in between.
        EvaluationPeriods: 2,
        DatapointsToAlarm: 1,
      });
      const timeouts = Object.values(resources(s.template, 'AWS::CloudWatch::Alarm')).find(
        (a) => a.Properties.AlarmName === 'ErpProxy-UpstreamTimeouts',
      );
      const metrics = timeouts?.Properties.Metrics as {
        MetricStat?: {
          Metric: { MetricName: string; Namespace: string; Dimensions: { Name: string; Value: string }[] };
        };
      }[];
      const watched = metrics.flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric] : []));
      expect(watched.map((m) => m.MetricName)).toEqual(Array(4).fill('UpstreamTimeouts'));
      expect(watched.map((m) => m.Dimensions.find((d) => d.Name === 'api')?.Value).sort()).toEqual([
        'mcp',
        'v1',
        'v2',
        'version',
      ]);
      expect(watched.every((m) => m.Namespace === 'ErpProxy')).toBe(true);
    });

    it('alarms on license refusals with the code dimension the runtime counts them under', () => {
      // The stack and the runtime share LICENSE_CODE; this checks the runtime counts a refusal under it.
      expect(errorCodeDimension('proxy_error', new LicenseError('refused').code)).toBe(LICENSE_CODE);
      const alarm = Object.values(resources(s.template, 'AWS::CloudWatch::Alarm')).find(
        (a) => a.Properties.AlarmName === 'ErpProxy-LicenseRefusals',
      );
      expect(alarm?.Properties).toMatchObject({
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
      const metrics = alarm?.Properties.Metrics as {
        MetricStat?: { Metric: { MetricName: string; Dimensions: { Name: string; Value: string }[] } };
      }[];
      const watched = metrics.flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric] : []));
      expect(watched.map((m) => m.MetricName)).toEqual(['Errors', 'Errors', 'Errors', 'Errors']);
      for (const metric of watched) {
        expect(metric.Dimensions).toEqual(
          expect.arrayContaining([
            { Name: 'code', Value: LICENSE_CODE },
            { Name: 'service', Value: 'erp-proxy' },
          ]),
        );
      }
      expect(watched.map((m) => m.Dimensions.find((d) => d.Name === 'api')?.Value).sort()).toEqual([
        'mcp',
        'v1',
        'v2',
        'version',
      ]);
    });

    it('has a dashboard showing every service metric', () => {
      s.template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
      const body = JSON.stringify(Object.values(resources(s.template, 'AWS::CloudWatch::Dashboard'))[0]);
      for (const metric of [
        'Requests',
        'Errors',
        'UpstreamTimeouts',
        'UpstreamLatency',
        'ProxyOverhead',
        'ResponseBytes',
        'LicenseDaysLeft',
        'McpToolCalls',
        'AuditRecords',
        'AuditWriteFailures',
        'Braked',
        'OldestBrakeAge',
        'BrakesReadFailures',
      ]) {
        expect(body).toContain(metric);
      }
    });

    it('gives every alarm an action, ALARM and OK, on the topic the stack creates, even without alarmEmail', () => {
      s.template.resourceCountIs('AWS::SNS::Topic', 1);
      s.template.resourceCountIs('AWS::SNS::Subscription', 0);
      const topicId = s.stack.getLogicalId(s.stack.alarmTopic.node.defaultChild as CfnElement);
      const alarms = Object.values(resources(s.template, 'AWS::CloudWatch::Alarm'));
      // 15, StateTableErrors (issue 39), LimitsFailedOpen (issue 40), AuditWriteFailures (issue 56), and
      // AuditSealerErrors, AuditSealLagging and AuditVerifyFailures (issue 57), BrakeForgotten and
      // BrakesUnread (issue 58).
      expect(alarms).toHaveLength(23);
      for (const alarm of alarms) {
        expect(alarm.Properties.AlarmActions, String(alarm.Properties.AlarmName)).toEqual([{ Ref: topicId }]);
        expect(alarm.Properties.OKActions, String(alarm.Properties.AlarmName)).toEqual([{ Ref: topicId }]);
      }
      s.template.hasOutput('AlarmTopicArn', { Value: { Ref: topicId } });
    });

    it('lets CloudWatch alarms of this account publish to the topic, over TLS only', () => {
      s.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
            Match.objectLike({
              Effect: 'Allow',
              Action: 'sns:Publish',
              Principal: { Service: 'cloudwatch.amazonaws.com' },
              Condition: Match.objectLike({
                StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
              }),
            }),
          ]),
        },
      });
    });
  });

  describe('license check schedule', () => {
    it('runs every hour, sending the aux function exactly the event its handler takes for the check', () => {
      const ruleId = s.stack.getLogicalId(s.stack.licenseCheckSchedule.node.defaultChild as CfnElement);
      const rules = resources(s.template, 'AWS::Events::Rule');
      // The license check, the brakes report (test/infra/brakes.test.ts), and the audit sealer's two
      // (test/infra/audit-seal.test.ts).
      const sealing = sealingOf(s);
      expect(Object.keys(rules).sort()).toEqual(
        [
          s.stack.licenseCheckSchedule,
          s.stack.brakesAgeSchedule,
          sealing.sealSchedule,
          sealing.verifySchedule,
        ]
          .map((rule) => s.stack.getLogicalId(rule.node.defaultChild as CfnElement))
          .sort(),
      );
      const rule = rules[ruleId]!.Properties;
      expect(rule).toMatchObject({ ScheduleExpression: 'rate(1 hour)', State: 'ENABLED' });
      expect(rule.EventPattern).toBeUndefined();
      const targets = rule.Targets as { Arn: unknown; Input: string; RetryPolicy: unknown }[];
      expect(targets).toHaveLength(1);
      expect(targets[0]?.Arn).toEqual({ 'Fn::GetAtt': [s.fnIds.aux, 'Arn'] });
      expect(JSON.parse(targets[0]!.Input)).toEqual(LICENSE_CHECK_EVENT);
      expect(isLicenseCheckEvent(JSON.parse(targets[0]!.Input))).toBe(true);
      expect(targets[0]?.RetryPolicy).toEqual({ MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 });
    });

    it('does not retry a failed check: one AuxErrors an hour for an unreadable license secret, not three', () => {
      const configs = Object.values(resources(s.template, 'AWS::Lambda::EventInvokeConfig')).map(
        (config) => config.Properties,
      );
      const sealerId = s.stack.getLogicalId(sealingOf(s).sealer.function.node.defaultChild as CfnElement);
      expect(configs).toEqual([
        {
          FunctionName: { Ref: s.fnIds.aux },
          Qualifier: '$LATEST',
          MaximumRetryAttempts: 0,
          MaximumEventAgeInSeconds: 3600,
        },
        // The audit sealer's, the other function EventBridge invokes: the next seal is the retry.
        {
          FunctionName: { Ref: sealerId },
          Qualifier: '$LATEST',
          MaximumRetryAttempts: 0,
          MaximumEventAgeInSeconds: 3600,
        },
      ]);
    });

    it('lets EventBridge invoke the aux function for this rule and the brakes report only, and no other function (but the audit sealer, for its two)', () => {
      const idOf = (construct: { node: { defaultChild?: unknown } }) =>
        s.stack.getLogicalId(construct.node.defaultChild as CfnElement);
      const fromEvents = Object.values(resources(s.template, 'AWS::Lambda::Permission')).filter(
        (permission) => permission.Properties.Principal === 'events.amazonaws.com',
      );
      const sealing = sealingOf(s);
      const invoke = (fnId: string, rule: { node: { defaultChild?: unknown } }) => ({
        Action: 'lambda:InvokeFunction',
        FunctionName: { 'Fn::GetAtt': [fnId, 'Arn'] },
        Principal: 'events.amazonaws.com',
        SourceArn: { 'Fn::GetAtt': [idOf(rule), 'Arn'] },
      });
      expect(fromEvents.map((permission) => permission.Properties)).toEqual([
        invoke(s.fnIds.aux, s.stack.licenseCheckSchedule),
        invoke(s.fnIds.aux, s.stack.brakesAgeSchedule),
        invoke(idOf(sealing.sealer.function), sealing.sealSchedule),
        invoke(idOf(sealing.sealer.function), sealing.verifySchedule),
      ]);
    });
  });

  describe('concurrency', () => {
    it('reserves concurrency for every function, sized from the throttle and the timeout', () => {
      const reserved = (name: FunctionName) =>
        propsOf(s.template, 'AWS::Lambda::Function', s.fnIds[name]).ReservedConcurrentExecutions;
      // min(burst 200, rate 100 x 28 s); version and mcp a tenth; aux 10.
      expect(reserved('execute-v1')).toBe(200);
      expect(reserved('execute-v2')).toBe(200);
      expect(reserved('version')).toBe(20);
      expect(reserved('aux')).toBe(10);
      expect(reserved('mcp')).toBe(20);
      // The audit sealer: one run at a time.
      const sealerId = s.stack.getLogicalId(sealingOf(s).sealer.function.node.defaultChild as CfnElement);
      const sealer = propsOf(s.template, 'AWS::Lambda::Function', sealerId).ReservedConcurrentExecutions;
      expect(sealer).toBe(1);
      // Within the default account quota of 1,000, leaving Lambda's 100 unreserved.
      const total = FUNCTION_NAMES.map(reserved).reduce((sum: number, n) => sum + Number(n), Number(sealer));
      expect(total).toBeLessThanOrEqual(1000 - 100);
    });
  });

  describe('secrets kept', () => {
    it('retains the three created secrets and every log group when they leave the stack or are replaced, not on a rolled-back create', () => {
      const secrets = s.template.findResources('AWS::SecretsManager::Secret');
      expect(Object.keys(secrets)).toHaveLength(3);
      const logGroups = s.template.findResources('AWS::Logs::LogGroup');
      expect(Object.keys(logGroups)).toHaveLength(
        1 + FUNCTION_NAMES.length + DEPLOY_CHECK_FUNCTIONS + AUDIT_SEALER_FUNCTIONS,
      );
      for (const kept of [...Object.values(secrets), ...Object.values(logGroups)]) {
        // RetainExceptOnCreate: a first create that rolls back deletes them (nothing billed is
        // left behind); a delete or replacement afterwards keeps them.
        expect(kept).toMatchObject({ DeletionPolicy: 'RetainExceptOnCreate', UpdateReplacePolicy: 'Retain' });
      }
    });

    it('never changes what makes the secret values, nor their logical ids (a change would overwrite them)', () => {
      // Changing any of these makes CloudFormation issue new keys or overwrite the license an
      // operator put: see SECRET_VALUE_SOURCES. This test is the guard; do not update it to
      // follow a change of the stack, change the stack back.
      const secrets = s.template.findResources('AWS::SecretsManager::Secret') as Record<
        string,
        { Properties: Record<string, unknown> }
      >;
      const byId = Object.fromEntries(
        Object.entries(secrets).map(([id, secret]) => [
          id,
          { generate: secret.Properties.GenerateSecretString, value: secret.Properties.SecretString },
        ]),
      );
      expect(byId).toEqual({
        ProxyKeysSecret14D643A0: {
          generate: { PasswordLength: 48, ExcludePunctuation: true, IncludeSpace: false },
          value: undefined,
        },
        LicenseSecretBF18429E: { generate: undefined, value: '{}' },
        AuditDigestSecretFFE41AD8: {
          generate: { PasswordLength: 64, ExcludePunctuation: true, IncludeSpace: false },
          value: undefined,
        },
      });
    });
  });

  describe('secrets extension and SDK', () => {
    it('gives every function the Parameters and Secrets extension, with its cache off and a timeout', () => {
      for (const name of FUNCTION_NAMES) {
        const fn = propsOf(s.template, 'AWS::Lambda::Function', s.fnIds[name]);
        // The pinned table's layer for the deployment's region (test/infra/secrets-extension.test.ts).
        expect(fn.Layers, name).toEqual([
          { 'Fn::FindInMap': ['SecretsExtensionLayerArm64', { Ref: 'AWS::Region' }, 'layerArn'] },
        ]);
        expect(envOf(s.template, s.fnIds[name]), name).toMatchObject({
          PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: '2773',
          PARAMETERS_SECRETS_EXTENSION_CACHE_ENABLED: 'false',
          SECRETS_MANAGER_TIMEOUT_MILLIS: '3000',
        });
      }
    });
  });

  describe('tags', () => {
    it('tags the stack with the service name only, by default', () => {
      expect(s.stack.tags.tagValues()).toEqual({ service: 'erp-proxy' });
    });
  });
});

describe('full context', () => {
  let s: Synth;
  beforeAll(() => {
    s = synth({
      allowedTargets: 'erp.example.com,*.erp.internal,10.20.0.0/16',
      allowedDatabases: ['prod', 'staging'],
      defaultTimeout: '10',
      maxTimeout: 20,
      lambdaTimeout: '24',
      executeMemoryMb: 1024,
      mcpMemoryMb: '768',
      mcpWriteTools: 'true',
      throttleRateLimit: '20',
      throttleBurstLimit: '40',
      logRetentionDays: 90,
      logLevel: 'debug',
      auxPublic: 'license,metrics',
      maxResponseBytes: 2_000_000,
      proxyKeysSecretArn: SECRET_ARN_PROXY,
      licenseSecretArn: SECRET_ARN_LICENSE,
      secretsKmsKeyArn: SECRETS_KEY_ARN,
      licensePublicKey: LICENSE_PUBLIC_KEY,
      vpcId: 'vpc-0123456789abcdef0',
      vpcSubnetIds: 'subnet-0123456789abcdef0,subnet-0fedcba9876543210',
      domainName: 'erp-proxy.example.com',
      certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/11111111-2222-3333-4444-555555555555',
      hostedZoneId: 'Z0123456789ABC',
      hostedZoneName: 'example.com',
      alarmEmail: 'ops@example.com',
      buildCommit: 'abc1234',
      executeConcurrency: '300',
      versionConcurrency: 30,
      auxConcurrency: '4',
      mcpConcurrency: 12,
      accountConcurrency: 3000,
      tags: { owner: 'platform-team', 'cost-centre': 'CC-1234', project: 'erp integration' },
    });
  });

  it('reserves the configured concurrency', () => {
    const reserved = Object.fromEntries(
      FUNCTION_NAMES.map((name) => [
        name,
        propsOf(s.template, 'AWS::Lambda::Function', s.fnIds[name]).ReservedConcurrentExecutions,
      ]),
    );
    expect(reserved).toEqual({ 'execute-v1': 300, 'execute-v2': 300, version: 30, aux: 4, mcp: 12 });
  });

  it('gives the mcp function its memory and the write tools setting (read by mcp and, for /_/about, aux)', () => {
    expect(propsOf(s.template, 'AWS::Lambda::Function', s.fnIds.mcp).MemorySize).toBe(768);
    expect(envOf(s.template, s.fnIds.mcp).MCP_WRITE_TOOLS).toBe('true');
    expect(envOf(s.template, s.fnIds.aux).MCP_WRITE_TOOLS).toBe('true');
    expect(envOf(s.template, s.fnIds['execute-v1'])).not.toHaveProperty('MCP_WRITE_TOOLS');
  });

  it('tags the stack (so CloudFormation tags every resource) from context', () => {
    expect(s.stack.tags.tagValues()).toEqual({
      service: 'erp-proxy',
      owner: 'platform-team',
      'cost-centre': 'CC-1234',
      project: 'erp integration',
    });
  });

  it('passes the settings to the functions', () => {
    const env = envOf(s.template, s.fnIds['execute-v2']);
    expect(env).toMatchObject({
      ERP_ALLOWED_TARGETS: 'erp.example.com,*.erp.internal,10.20.0.0/16',
      ERP_ALLOWED_DATABASES: 'prod,staging',
      ERP_DEFAULT_TIMEOUT: '10',
      ERP_MAX_TIMEOUT: '20',
      LOG_LEVEL: 'DEBUG',
      MAX_RESPONSE_BYTES: '2000000',
      LICENSE_PUBLIC_KEY: LICENSE_PUBLIC_KEY,
      PROXY_KEYS_SECRET_ID: SECRET_ARN_PROXY,
      LICENSE_SECRET_ID: SECRET_ARN_LICENSE,
    });
    expect(envOf(s.template, s.fnIds.aux)).toMatchObject({
      AUX_PUBLIC: 'license,metrics',
      BUILD_COMMIT: 'abc1234',
    });
    s.template.hasResourceProperties('AWS::Lambda::Function', { MemorySize: 1024, Timeout: 24 });
    s.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      DefaultRouteSettings: { ThrottlingRateLimit: 20, ThrottlingBurstLimit: 40 },
    });
    s.template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 90 });
  });

  it('imports the secrets and grants read on exactly their ARNs (and on the audit digest key it creates)', () => {
    // The audit digest key is always the stack's own.
    s.template.resourceCountIs('AWS::SecretsManager::Secret', 1);
    const digestId = s.stack.getLogicalId(s.stack.auditDigestSecret.node.defaultChild as CfnElement);
    const resourcesRead = new Set<string>();
    for (const policy of Object.values(resources(s.template, 'AWS::IAM::Policy'))) {
      for (const st of statementsOf(policy)) {
        if (actions(st).includes('secretsmanager:GetSecretValue'))
          for (const resource of resourcesOf(st)) resourcesRead.add(JSON.stringify(resource));
      }
    }
    expect([...resourcesRead].sort()).toEqual(
      [
        JSON.stringify(SECRET_ARN_PROXY),
        JSON.stringify(SECRET_ARN_LICENSE),
        JSON.stringify({ Ref: digestId }),
      ].sort(),
    );
  });

  it('lets each function decrypt the imported secrets with their KMS key, through Secrets Manager only', () => {
    for (const name of FUNCTION_NAMES) {
      const roleId = roleOf(s.template, s.fnIds[name]);
      const decrypts = policiesOfRole(s.template, roleId)
        .flatMap(statementsOf)
        .filter((st) => actions(st).includes('kms:Decrypt'));
      expect(decrypts, name).toHaveLength(1);
      expect(decrypts[0]).toMatchObject({
        Effect: 'Allow',
        Resource: SECRETS_KEY_ARN,
        Condition: {
          StringEquals: {
            'kms:ViaService': {
              'Fn::Join': ['', ['secretsmanager.', { Ref: 'AWS::Region' }, '.amazonaws.com']],
            },
          },
        },
      });
      expect(actions(decrypts[0] as Statement), name).toEqual(['kms:Decrypt']);
    }
  });

  it('attaches every function (and the deploy table check) to the VPC subnets with a created egress-only security group', () => {
    const placed = {
      VpcConfig: {
        SubnetIds: ['subnet-0123456789abcdef0', 'subnet-0fedcba9876543210'],
        SecurityGroupIds: [{ 'Fn::GetAtt': [expect.stringMatching(/^FunctionSecurityGroup/), 'GroupId'] }],
      },
    };
    const functions = resources(s.template, 'AWS::Lambda::Function');
    const checkId = s.stack.getLogicalId(
      s.stack.stateTableCheck.function.function.node.defaultChild as CfnElement,
    );
    for (const id of [...Object.values(s.fnIds), checkId]) {
      expect(functions[id]?.Properties, id).toMatchObject(placed);
    }
    // Only CDK's trigger provider is outside: it calls the Lambda API and CloudFormation's S3 URL; and
    // the audit sealer, which reaches AWS APIs only (DynamoDB, S3, KMS), never an ERP.
    const sealerId = s.stack.getLogicalId(sealingOf(s).sealer.function.node.defaultChild as CfnElement);
    expect(
      Object.keys(functions)
        .filter((id) => !('VpcConfig' in (functions[id]?.Properties ?? {})))
        .sort(),
    ).toEqual([expect.stringMatching(/^AWSCDKTriggerCustomResourceProvider/), sealerId]);
    s.template.hasResourceProperties('AWS::EC2::SecurityGroup', {
      VpcId: 'vpc-0123456789abcdef0',
      SecurityGroupIngress: Match.absent(),
    });
  });

  it('maps the custom domain to the stage and creates its alias record', () => {
    s.template.hasResourceProperties('AWS::ApiGatewayV2::DomainName', {
      DomainName: 'erp-proxy.example.com',
    });
    s.template.resourceCountIs('AWS::ApiGatewayV2::ApiMapping', 1);
    s.template.hasResourceProperties('AWS::Route53::RecordSet', {
      Name: 'erp-proxy.example.com.',
      Type: 'A',
      HostedZoneId: 'Z0123456789ABC',
    });
  });

  it('subscribes the alarm e-mail to the topic the stack creates', () => {
    s.template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
    });
    s.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
    s.template.allResourcesProperties('AWS::CloudWatch::Alarm', {
      AlarmActions: [{ Ref: Match.stringLikeRegexp('^AlarmTopic') }],
    });
  });

  it("still has no wildcard resource except GetMetricData and the sealer's bucket objects (VPC access comes from the managed policy)", () => {
    for (const [id, policy] of Object.entries(resources(s.template, 'AWS::IAM::Policy'))) {
      for (const statement of statementsOf(policy)) {
        if (isSealerObjectGrant(s, id, statement)) continue;
        if (JSON.stringify(statement.Resource).includes('*')) {
          expect(actions(statement)).toEqual(['cloudwatch:GetMetricData']);
        }
      }
    }
  });
});

describe('an existing alarm topic', () => {
  const TOPIC_ARN = 'arn:aws:sns:eu-west-1:123456789012:ops-alarms';

  it('sends every alarm to the topic given by ARN, creates none, and can subscribe an e-mail to it', () => {
    const s = synth({ alarmTopicArn: TOPIC_ARN, alarmEmail: 'ops@example.com' });
    s.template.resourceCountIs('AWS::SNS::Topic', 0);
    s.template.allResourcesProperties('AWS::CloudWatch::Alarm', {
      AlarmActions: [TOPIC_ARN],
      OKActions: [TOPIC_ARN],
    });
    s.template.hasResourceProperties('AWS::SNS::Subscription', {
      TopicArn: TOPIC_ARN,
      Protocol: 'email',
      Endpoint: 'ops@example.com',
    });
  });
});

describe('the transports deploy', () => {
  it('puts -c v1Transport=json2 -c v2Transport=auto on exactly the functions that read them', () => {
    const s = synth({ v1Transport: 'json2', v2Transport: 'auto' });
    const variable = (name: FunctionName, key: string) => envOf(s.template, s.fnIds[name])[key];
    expect(FUNCTION_NAMES.filter((name) => variable(name, 'ERP_V1_TRANSPORT') !== undefined)).toEqual([
      'execute-v1',
      'aux',
    ]);
    expect(FUNCTION_NAMES.filter((name) => variable(name, 'ERP_V2_TRANSPORT') !== undefined)).toEqual([
      'execute-v2',
      'aux',
    ]);
    expect(variable('execute-v1', 'ERP_V1_TRANSPORT')).toBe('json2');
    expect(variable('aux', 'ERP_V1_TRANSPORT')).toBe('json2');
    expect(variable('execute-v2', 'ERP_V2_TRANSPORT')).toBe('auto');
    expect(variable('aux', 'ERP_V2_TRANSPORT')).toBe('auto');
  });

  it('stops the synth on a bad transport, naming the key', () => {
    expect(() => synth({ v1Transport: 'xmlrpc', v2Transport: 'jsonrpc' })).toThrow(StackConfigError);
    expect(() => synth({ v1Transport: 'xmlrpc' })).toThrow(
      /v1Transport: expected one of auto, json2, jsonrpc, got "xmlrpc"/,
    );
    expect(() => synth({ v2Transport: 'jsonrpc' })).toThrow(
      /v2Transport: expected one of json2, auto, got "jsonrpc"/,
    );
  });
});

describe('OAuth on /mcp (mcpOauthIssuers)', () => {
  it('creates the identity-map secret (kept, an empty map), lets only the mcp function read it, and sets the audience', () => {
    const s = synth({ mcpOauthIssuers: 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Example' });
    const env = (name: FunctionName) => envOf(s.template, s.fnIds[name]);
    const [secretId, secret] = Object.entries(resources(s.template, 'AWS::SecretsManager::Secret')).find(
      ([id]) => id.startsWith('OAuthIdentitiesSecret'),
    ) ?? ['', undefined];
    expect(secret?.Properties.SecretString).toBe('{"identities":[]}');
    expect((secret as unknown as { DeletionPolicy: string }).DeletionPolicy).toBe('RetainExceptOnCreate');
    expect(env('mcp').MCP_OAUTH_ISSUER).toBe('https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Example');
    expect(env('mcp').MCP_OAUTH_IDENTITIES_SECRET_ID).toEqual({ Ref: secretId });
    s.template.hasOutput('OAuthIdentitiesSecretArn', { Value: { Ref: secretId } });
    // The public /mcp URL: the API's own endpoint (no custom domain here).
    expect(JSON.stringify(env('mcp').MCP_OAUTH_AUDIENCE)).toMatch(
      /"Fn::GetAtt":\["HttpApi[0-9A-F]*","ApiEndpoint"\]\},"\/mcp"/,
    );
    for (const name of FUNCTION_NAMES.filter((fn) => fn !== 'mcp')) {
      expect(env(name).MCP_OAUTH_IDENTITIES_SECRET_ID, name).toBeUndefined();
      expect(env(name).MCP_OAUTH_AUDIENCE, name).toBeUndefined();
    }
    // Only the mcp function's role may read the identity map (it holds ERP keys).
    const readers = Object.values(resources(s.template, 'AWS::IAM::Policy'))
      .filter((policy) =>
        statementsOf(policy).some((statement) => JSON.stringify(statement.Resource).includes(secretId)),
      )
      .map((policy) => JSON.stringify(policy.Properties.Roles));
    expect(readers).toHaveLength(1);
    expect(readers[0]).toMatch(/McpRole|Mcp.*Role/);
  });

  it("uses the operator's audience and identity-map secret when given, creating none", () => {
    const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:erp-proxy/oauth-identities-MnOpQr';
    const s = synth({
      mcpOauthIssuers: 'https://login.example.com/realms/erp',
      mcpOauthAudience: 'https://erp-proxy.example.com/mcp',
      mcpOauthIdentitiesSecretArn: arn,
    });
    const env = envOf(s.template, s.fnIds.mcp);
    expect(env.MCP_OAUTH_AUDIENCE).toBe('https://erp-proxy.example.com/mcp');
    expect(env.MCP_OAUTH_IDENTITIES_SECRET_ID).toBe(arn);
    expect(
      Object.keys(resources(s.template, 'AWS::SecretsManager::Secret')).some((id) => id.startsWith('OAuth')),
    ).toBe(false);
  });

  it('stops the synth on an issuer that is not an https URL, naming the key', () => {
    expect(() => synth({ mcpOauthIssuers: 'http://login.example.com' })).toThrow(/mcpOauthIssuers/);
  });

  it('leaves OAuth off by default: no secret, no audience', () => {
    const s = synth();
    expect(
      Object.keys(resources(s.template, 'AWS::SecretsManager::Secret')).some((id) => id.startsWith('OAuth')),
    ).toBe(false);
    expect(envOf(s.template, s.fnIds.mcp).MCP_OAUTH_AUDIENCE).toBeUndefined();
  });
});

describe('without reservations (reserveConcurrency=false)', () => {
  it('deploys every function without reserved concurrency, for an account of any quota', () => {
    const s = synth({ reserveConcurrency: 'false', accountConcurrency: 10 });
    for (const name of FUNCTION_NAMES) {
      expect(propsOf(s.template, 'AWS::Lambda::Function', s.fnIds[name])).not.toHaveProperty(
        'ReservedConcurrentExecutions',
      );
    }
  });
});

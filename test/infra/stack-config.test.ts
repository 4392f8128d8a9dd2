/**
 * Context parsing: defaults, CLI strings and cdk.json values alike, and one readable error that
 * names every bad key.
 */
import { generateKeyPairSync } from 'node:crypto';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { describe, expect, it } from 'vitest';
import {
  CLOUDWATCH_CALL_MAX_MS,
  CLOUDWATCH_CONNECT_TIMEOUT_MS,
  CLOUDWATCH_MAX_ATTEMPTS,
  CLOUDWATCH_REQUEST_TIMEOUT_MS,
} from '../../lambdas/platform/aws/cloudwatch-client-limits.ts';
import {
  DEFAULT_MAX_RESPONSE_BYTES,
  parseSettings,
  RUNTIME_SETTINGS,
} from '../../lambdas/platform/settings.ts';
import {
  type DeployedSettings,
  MIN_ANSWER_MARGIN_SECONDS,
  MIN_AUX_TIMEOUT_SECONDS,
  parseStackConfig,
  StackConfigError,
  type StackSettingValues,
  stackConfigOf,
} from '../../lib/stack-config.ts';
import { STACK_SETTINGS } from '../../lib/stack-settings.ts';

const read =
  (context: Record<string, unknown>) =>
  (key: string): unknown =>
    context[key];

function problemsOf(context: Record<string, unknown>): readonly string[] {
  try {
    parseStackConfig(read(context));
  } catch (error) {
    if (error instanceof StackConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a StackConfigError');
}

describe('parseStackConfig', () => {
  it('has safe defaults: no allowed target, timeouts that fit the gateway, 30-day logs', () => {
    const config = parseStackConfig(read({}));
    expect(config.settings).toMatchObject({
      allowedTargets: [],
      allowedDatabases: [],
      defaultTimeoutSeconds: 15,
      maxTimeoutSeconds: 25,
      // Deployed, the ERP's tracebacks stay home (issue 54); locally ERP_STRIP_DEBUG stays false.
      stripDebug: true,
      maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES,
      auxPublic: new Set(),
      v1Transport: 'auto',
      v2Transport: 'json2',
      licensePublicKey: undefined,
    });
    expect(config).toMatchObject({
      stackName: 'ErpProxy',
      production: false,
      lambdaTimeoutSeconds: 28,
      auxTimeoutSeconds: 10,
      executeMemoryMb: 512,
      versionAndAuxMemoryMb: 256,
      throttleRateLimit: 100,
      throttleBurstLimit: 200,
      logRetention: RetentionDays.ONE_MONTH,
      logLevel: 'INFO',
      proxyKeysSecretArn: undefined,
      licenseSecretArn: undefined,
      vpc: undefined,
      domain: undefined,
      reservedConcurrency: { 'execute-v1': 200, 'execute-v2': 200, version: 20, aux: 10 },
      accountConcurrency: 1000,
      tags: {},
      alarms: {
        email: undefined,
        topicArn: undefined,
        serverErrorRatePercent: 5,
        p99LatencyMs: 10_000,
        upstreamTimeouts: 5,
        licenseWarningDays: 14,
      },
    });
  });

  it('strips ERP tracebacks by default once deployed, and leaves them in when told to (stripDebug=false)', () => {
    expect(parseStackConfig(read({})).settings.stripDebug).toBe(true);
    expect(parseStackConfig(read({ stripDebug: 'false' })).settings.stripDebug).toBe(false);
    expect(parseStackConfig(read({ stripDebug: false })).settings.stripDebug).toBe(false);
    // The local server reads the environment: unset is false there.
    expect(RUNTIME_SETTINGS.stripDebug.schema.safeParse(undefined)).toMatchObject({
      success: true,
      data: false,
    });
  });

  it('reads -c strings and cdk.json values alike', () => {
    const fromCli = parseStackConfig(
      read({
        allowedTargets: ' erp.example.com, *.corp.example ,10.0.0.0/8,fd00::/8 ',
        maxTimeout: '20',
        stripDebug: 'TRUE',
        throttleRateLimit: '12.5',
      }),
    );
    const fromJson = parseStackConfig(
      read({
        allowedTargets: ['erp.example.com', '*.corp.example', '10.0.0.0/8', 'fd00::/8'],
        maxTimeout: 20,
        stripDebug: true,
        throttleRateLimit: 12.5,
      }),
    );
    expect(fromCli).toEqual(fromJson);
    expect(fromCli.settings.allowedTargets).toEqual([
      'erp.example.com',
      '*.corp.example',
      '10.0.0.0/8',
      'fd00::/8',
    ]);
    expect(fromCli.settings.maxTimeoutSeconds).toBe(20);
    expect(fromCli.settings.stripDebug).toBe(true);
  });

  it('accepts every CloudWatch retention value, 9999 (never expire) included', () => {
    expect(parseStackConfig(read({ logRetentionDays: 9999 })).logRetention).toBe(RetentionDays.INFINITE);
    expect(parseStackConfig(read({ logRetentionDays: 3653 })).logRetention).toBe(RetentionDays.TEN_YEARS);
    expect(problemsOf({ logRetentionDays: 10_000 })[0]).toMatch(
      /^logRetentionDays: expected an integer from 1 to 9999 days/,
    );
  });

  it('treats an empty string as not set', () => {
    expect(parseStackConfig(read({ maxTimeout: '', alarmEmail: ' ' })).settings.maxTimeoutSeconds).toBe(25);
  });

  it('keeps ERP_MAX_TIMEOUT at least 2 s under the Lambda timeout, itself under the 29 s integration timeout', () => {
    expect(problemsOf({ maxTimeout: 27 })).toEqual([
      expect.stringMatching(/maxTimeout \(27\) must be at least 2 s below lambdaTimeout \(28\)/),
    ]);
    expect(problemsOf({ lambdaTimeout: 29 })[0]).toMatch(
      /lambdaTimeout: expected an integer from 3 to 28 seconds/,
    );
    expect(problemsOf({ defaultTimeout: 20, maxTimeout: 18, lambdaTimeout: 25 })).toEqual([
      'defaultTimeout (20) is above maxTimeout (18)',
    ]);
    expect(
      parseStackConfig(read({ maxTimeout: 10, lambdaTimeout: 12, defaultTimeout: 5 })).lambdaTimeoutSeconds,
    ).toBe(12);
  });

  it('refuses a list given with only separators, as ERP_ALLOWED_TARGETS does; an empty value is the default', () => {
    for (const allowedTargets of [' , ', ',', [' '], ['', ' ']]) {
      expect(problemsOf({ allowedTargets })).toEqual([
        'allowedTargets: lists nothing (only commas and spaces); leave it out for the default',
      ]);
    }
    expect(problemsOf({ auxPublic: ' ,, ' })).toEqual([
      'auxPublic: lists nothing (only commas and spaces); leave it out for the default',
    ]);
    expect(parseStackConfig(read({ allowedTargets: '' })).settings.allowedTargets).toEqual([]);
    expect(parseStackConfig(read({ allowedTargets: [] })).settings.allowedTargets).toEqual([]);
  });

  it('keeps auxTimeout long enough for a failing CloudWatch scrape to be answered', () => {
    // Derived from the client's own limits: 2 attempts x (1 s connect + 3 s request) + 2 s to answer.
    expect(MIN_AUX_TIMEOUT_SECONDS).toBe(
      Math.ceil(
        (CLOUDWATCH_MAX_ATTEMPTS * (CLOUDWATCH_CONNECT_TIMEOUT_MS + CLOUDWATCH_REQUEST_TIMEOUT_MS)) / 1000,
      ) + MIN_ANSWER_MARGIN_SECONDS,
    );
    expect(MIN_AUX_TIMEOUT_SECONDS * 1000).toBeGreaterThanOrEqual(
      CLOUDWATCH_CALL_MAX_MS + MIN_ANSWER_MARGIN_SECONDS * 1000,
    );
    expect(MIN_AUX_TIMEOUT_SECONDS).toBe(10);
    // The default is accepted, and so is the bound itself; one second less is refused.
    expect(parseStackConfig(read({})).auxTimeoutSeconds).toBeGreaterThanOrEqual(MIN_AUX_TIMEOUT_SECONDS);
    expect(parseStackConfig(read({ auxTimeout: MIN_AUX_TIMEOUT_SECONDS })).auxTimeoutSeconds).toBe(
      MIN_AUX_TIMEOUT_SECONDS,
    );
    expect(parseStackConfig(read({ auxTimeout: '28' })).auxTimeoutSeconds).toBe(28);
    for (const auxTimeout of [MIN_AUX_TIMEOUT_SECONDS - 1, '3', 29]) {
      expect(problemsOf({ auxTimeout })).toEqual([
        `auxTimeout: expected an integer from 10 to 28 seconds (a /_/metrics scrape that cannot reach ` +
          `CloudWatch fails after up to 8 s, and the function needs 2 s more to answer), got ${JSON.stringify(auxTimeout)}`,
      ]);
    }
  });

  it('lists every bad key at once, with what it expected and what it got', () => {
    const problems = problemsOf({
      allowedTargets: 'https://erp.example.com,10.0.0.0/33,erp.example.com:8069',
      executeMemoryMb: 'lots',
      logRetentionDays: 31,
      logLevel: 'loud',
      auxPublic: 'about',
      proxyKeysSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:keys',
      alarmEmail: 'ops',
    });
    // One rule for flags, the runtime's: yes/no and on/off too.
    expect(problemsOf({ stripDebug: 'maybe' })).toEqual(['stripDebug: expected true or false, got "maybe"']);
    expect(parseStackConfig(read({ stripDebug: 'yes' })).settings.stripDebug).toBe(true);
    expect(problemsOf({ allowedDatabases: 'prod db' })[0]).toMatch(
      /allowedDatabases: "prod db" is not valid/,
    );
    expect(problems).toEqual([
      expect.stringMatching(/^allowedTargets: "https:\/\/erp.example.com" is not valid; expected host names/),
      expect.stringMatching(/^allowedTargets: "10.0.0.0\/33" is not valid/),
      expect.stringMatching(/^allowedTargets: "erp.example.com:8069" is not valid/),
      expect.stringMatching(/^auxPublic: "about" is not valid/),
      expect.stringMatching(
        /^logLevel: expected one of TRACE, DEBUG, INFO, WARN, ERROR, CRITICAL, SILENT, got "loud"$/,
      ),
      'executeMemoryMb: expected an integer from 128 to 10240 MB, got "lots"',
      expect.stringMatching(
        /^logRetentionDays: CloudWatch Logs accepts only 1, 3, 5, 7, 14, 30, 60, 90, .*; got 31$/,
      ),
      expect.stringMatching(
        /^proxyKeysSecretArn: expected the complete secret ARN, including the 6-character suffix/,
      ),
      'alarmEmail: expected an e-mail address, got "ops"',
    ]);
    expect(() => parseStackConfig(read({ logLevel: 'loud' }))).toThrow(
      /Invalid CDK context:\n {2}- logLevel/,
    );
  });

  it('requires the VPC id with subnets, and the certificate with the domain', () => {
    expect(problemsOf({ vpcSubnetIds: 'subnet-0123456789abcdef0' })).toEqual([
      'vpcSubnetIds and vpcSecurityGroupIds need vpcId',
    ]);
    expect(problemsOf({ vpcId: 'vpc-0123456789abcdef0' })).toEqual([
      'vpcId is set but vpcSubnetIds is empty: list the private subnets',
    ]);
    expect(problemsOf({ domainName: 'api.example.com' })).toEqual([
      'domainName and certificateArn go together',
    ]);
    expect(problemsOf({ disableExecuteApiEndpoint: true })).toEqual([
      'hostedZoneId, hostedZoneName and disableExecuteApiEndpoint need domainName',
    ]);
    const config = parseStackConfig(
      read({
        vpcId: 'vpc-0123456789abcdef0',
        vpcSubnetIds: ['subnet-0123456789abcdef0'],
        vpcSecurityGroupIds: 'sg-0123456789abcdef0',
        domainName: 'api.example.com',
        certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc-123',
        disableExecuteApiEndpoint: 'true',
      }),
    );
    expect(config.vpc).toEqual({
      vpcId: 'vpc-0123456789abcdef0',
      subnetIds: ['subnet-0123456789abcdef0'],
      securityGroupIds: ['sg-0123456789abcdef0'],
    });
    expect(config.domain).toMatchObject({ domainName: 'api.example.com', disableExecuteApiEndpoint: true });
  });

  it('accepts complete secret ARNs in any partition', () => {
    const config = parseStackConfig(
      read({
        proxyKeysSecretArn: 'arn:aws-us-gov:secretsmanager:us-gov-west-1:123456789012:secret:erp/keys-AbCdEf',
        licenseSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:license-123456',
      }),
    );
    expect(config.proxyKeysSecretArn).toMatch(/-AbCdEf$/);
    expect(config.licenseSecretArn).toMatch(/-123456$/);
  });

  it('refuses at synth every target entry and public key the runtime would refuse at cold start', () => {
    // Each of these parses as a host name or address by a looser rule, and would make every
    // function fail on its first call (compileTargetPolicy / loadConfig throw).
    for (const entry of ['10.0.0.300', 'a:b:c:d:e:f:0:1:2:3/64', '127.1', '0x7f.1', 'fe80::1%eth0']) {
      expect(problemsOf({ allowedTargets: entry }), entry).toEqual([
        expect.stringMatching(
          new RegExp(`^allowedTargets: "${entry.replace(/[.*]/g, '\\$&')}" is not valid`),
        ),
      ]);
    }
    expect(problemsOf({ licensePublicKey: 'not-a-key' })).toEqual([
      'licensePublicKey: expected an Ed25519 public key (base64 or PEM, from npm run license -- keygen), got "not-a-key"',
    ]);
    // An RSA key is a public key, but not the kind licenses are signed with.
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({
      type: 'spki',
      format: 'pem',
    });
    expect(problemsOf({ licensePublicKey: String(rsa) })).toHaveLength(1);
    const ed25519 = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'der' });
    const key = ed25519.toString('base64');
    expect(parseStackConfig(read({ licensePublicKey: key })).settings.licensePublicKey).toBe(key);
    expect(
      parseStackConfig(read({ allowedTargets: '[::1],::1/128,*.erp.internal' })).settings.allowedTargets,
    ).toHaveLength(3);
  });

  it('takes a KMS key for imported secrets only', () => {
    const key = 'arn:aws:kms:eu-west-1:123456789012:key/0b7a3c2e-1111-2222-3333-444455556666';
    const licenseSecretArn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:license-123456';
    expect(parseStackConfig(read({ licenseSecretArn, secretsKmsKeyArn: key })).secretsKmsKeyArn).toBe(key);
    expect(parseStackConfig(read({})).secretsKmsKeyArn).toBeUndefined();
    expect(problemsOf({ secretsKmsKeyArn: key })).toEqual([
      expect.stringMatching(/^secretsKmsKeyArn applies to imported secrets only/),
    ]);
    expect(problemsOf({ licenseSecretArn, secretsKmsKeyArn: 'alias/erp-proxy' })).toEqual([
      'secretsKmsKeyArn: expected a KMS key ARN (arn:aws:kms:...:key/...), got "alias/erp-proxy"',
    ]);
    // A malformed secret ARN is reported once, not again as "no imported secret".
    expect(problemsOf({ licenseSecretArn: 'license', secretsKmsKeyArn: key })).toEqual([
      expect.stringMatching(/^licenseSecretArn: expected the complete secret ARN/),
    ]);
  });

  describe('reserved concurrency', () => {
    it('sizes the defaults from the stage throttle and the Lambda timeout', () => {
      // Burst 40 < rate 20 x 28 s: the burst.
      expect(
        parseStackConfig(read({ throttleRateLimit: 20, throttleBurstLimit: 40 })).reservedConcurrency,
      ).toEqual({
        'execute-v1': 40,
        'execute-v2': 40,
        version: 5,
        aux: 10,
        mcp: 5,
      });
      // Rate 2 x 10 s = 20 < burst 100: no more than could ever run at once.
      expect(
        parseStackConfig(
          read({
            throttleRateLimit: 2,
            throttleBurstLimit: 100,
            lambdaTimeout: 10,
            maxTimeout: 8,
            defaultTimeout: 5,
          }),
        ).reservedConcurrency,
      ).toEqual({ 'execute-v1': 20, 'execute-v2': 20, version: 5, aux: 10, mcp: 5 });
    });

    it('takes each function group from context', () => {
      const config = parseStackConfig(
        read({ executeConcurrency: '150', versionConcurrency: 12, auxConcurrency: '3', mcpConcurrency: '7' }),
      );
      expect(config.reservedConcurrency).toEqual({
        'execute-v1': 150,
        'execute-v2': 150,
        version: 12,
        aux: 3,
        mcp: 7,
      });
      // version's and mcp's defaults: a tenth of the execute reservation made, at least 5
      // (docs/deployment.md), also when executeConcurrency sets it.
      const tenthOf = (executeConcurrency: string) => {
        const reserved = parseStackConfig(read({ executeConcurrency })).reservedConcurrency;
        return { version: reserved?.version, mcp: reserved?.mcp };
      };
      expect(tenthOf('150')).toEqual({ version: 15, mcp: 15 });
      expect(tenthOf('300')).toEqual({ version: 30, mcp: 30 });
      expect(tenthOf('20')).toEqual({ version: 5, mcp: 5 });
    });

    it('refuses reservations that would leave the account fewer than 100 unreserved executions', () => {
      // The default burst of 500 gives 500 + 500 + 50 + 10 + 50, and the audit sealer's 1: 1,111 > 1,000 - 100.
      const problems = problemsOf({ throttleBurstLimit: 500 });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/six functions reserve 1111 .*mcp 50, audit-sealer 1\).* at most 900/);
      expect(problems[0]).toMatch(/accountConcurrency/);
      // The same with a raised quota is fine, and 900 exactly is the limit, the sealer's 1 included.
      expect(() =>
        parseStackConfig(read({ throttleBurstLimit: 500, accountConcurrency: 2000 })),
      ).not.toThrow();
      const fits = {
        executeConcurrency: 400,
        versionConcurrency: 50,
        auxConcurrency: 10,
        mcpConcurrency: 39,
      };
      expect(() => parseStackConfig(read(fits))).not.toThrow();
      expect(problemsOf({ ...fits, mcpConcurrency: 40 })[0]).toMatch(/reserve 901/);
      // Without the sealer (auditSealing=off) the five may reserve the 900 themselves.
      const withoutSealer = { ...fits, mcpConcurrency: 40, auditSealing: 'off' };
      expect(() => parseStackConfig(read(withoutSealer))).not.toThrow();
      expect(problemsOf({ ...withoutSealer, mcpConcurrency: 41 })[0]).toMatch(
        /five functions reserve 901 .*mcp 41\), and/,
      );
      // A new account's quota of 10 cannot reserve anything: Lambda keeps all 10 unreserved. Lowering
      // the reservations cannot help, so the message asks for a quota increase (451 + 100) or the switch.
      const newAccount = problemsOf({ accountConcurrency: 10 });
      expect(newAccount).toHaveLength(1);
      expect(newAccount[0]).toMatch(
        /keeps 10 of the account's 10 unreserved, so this account cannot reserve any/,
      );
      expect(newAccount[0]).toMatch(/A quota increase is needed: ask for at least 551/);
      expect(newAccount[0]).toMatch(/reserveConcurrency=false/);
      expect(newAccount[0]).not.toMatch(/lower executeConcurrency/);
      // The same below a quota of 106 (100 kept, 1 for each of the 5 functions and the sealer).
      expect(problemsOf({ accountConcurrency: 105 })[0]).toMatch(/cannot reserve any/);
      const ones = { executeConcurrency: 1, versionConcurrency: 1, auxConcurrency: 1, mcpConcurrency: 1 };
      expect(() => parseStackConfig(read({ accountConcurrency: 106, ...ones }))).not.toThrow();
      // Without the sealer, 105 is enough for the five.
      expect(problemsOf({ accountConcurrency: 104, auditSealing: 'off' })[0]).toMatch(/cannot reserve any/);
      expect(() =>
        parseStackConfig(read({ accountConcurrency: 105, auditSealing: 'off', ...ones })),
      ).not.toThrow();
      // A quota of 50 keeps all 50.
      expect(problemsOf({ accountConcurrency: 50 })[0]).toMatch(/keeps 50 of the account's 50/);
    });

    it('reserves 1 for the audit sealer with the others, none without them or without sealing', () => {
      expect(parseStackConfig(read({})).auditSealing).toEqual({
        mode: 'compliance',
        sealMinutes: 5,
        lockDays: 400,
        sealerConcurrency: 1,
      });
      expect(parseStackConfig(read({ reserveConcurrency: 'false' })).auditSealing?.sealerConcurrency).toBe(
        undefined,
      );
      expect(parseStackConfig(read({ auditSealing: 'off' })).auditSealing).toBeUndefined();
    });

    it('deploys without reservations when told to, and then takes no reservation setting', () => {
      const config = parseStackConfig(read({ reserveConcurrency: 'false', accountConcurrency: 10 }));
      expect(config.reservedConcurrency).toBeUndefined();
      expect(problemsOf({ reserveConcurrency: false, executeConcurrency: 5 })).toEqual([
        'executeConcurrency, versionConcurrency, auxConcurrency and mcpConcurrency need reserveConcurrency=true',
      ]);
      expect(problemsOf({ reserveConcurrency: false, mcpConcurrency: 5 })).toHaveLength(1);
    });

    it('refuses zero or non-integer concurrency (0 would turn a function off)', () => {
      expect(problemsOf({ executeConcurrency: 0 })[0]).toMatch(
        /^executeConcurrency: expected an integer from 1/,
      );
      expect(problemsOf({ auxConcurrency: '2.5' })[0]).toMatch(/^auxConcurrency: expected an integer/);
    });
  });

  describe('tags and the alarm topic', () => {
    it('reads tags as name=value pairs from -c, or as an object from cdk.json', () => {
      expect(parseStackConfig(read({ tags: 'owner=platform team, cost-centre=CC-1234' })).tags).toEqual({
        owner: 'platform team',
        'cost-centre': 'CC-1234',
      });
      expect(parseStackConfig(read({ tags: { owner: 'ops', costCentre: 42 } })).tags).toEqual({
        owner: 'ops',
        costCentre: '42',
      });
    });

    it('refuses tags AWS would refuse, and the service tag the stack sets', () => {
      expect(problemsOf({ tags: 'owner' })[0]).toMatch(/^tags: expected name=value pairs/);
      expect(problemsOf({ tags: { 'aws:owner': 'x' } })[0]).toMatch(/aws: prefix is reserved/);
      expect(problemsOf({ tags: { owner: 'a;b' } })[0]).toMatch(/^tags: tag owner: the value/);
      expect(problemsOf({ tags: { service: 'x' } })[0]).toMatch(/set by the stack/);
      expect(problemsOf({ tags: ['owner=x'] })[0]).toMatch(/^tags: expected/);
    });

    it('takes an existing SNS topic ARN for the alarms', () => {
      const arn = 'arn:aws:sns:eu-west-1:123456789012:ops-alarms';
      expect(parseStackConfig(read({ alarmTopicArn: arn })).alarms.topicArn).toBe(arn);
      expect(problemsOf({ alarmTopicArn: 'ops-alarms' })[0]).toMatch(
        /^alarmTopicArn: expected an SNS topic ARN/,
      );
    });
  });
});

describe('the stack-only settings (lib/stack-settings.ts)', () => {
  /**
   * A setting the catalogue declares but `StackConfig` never takes would be documented, parsed
   * and checked, and change nothing. `environment` is the exception: lib/settings-file.ts reads it
   * to choose the settings file, before the rest is parsed.
   */
  it('reads every stack-only setting: parseStackConfig reads each parsed value', () => {
    const readByApp = new Set(['environment']);
    const seen = new Set<string>();
    const contexts: Record<string, unknown>[] = [
      {},
      { reserveConcurrency: false },
      {
        production: true,
        acceptUnsignedLicenses: true,
        proxyKeysSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:k-AbCdEf',
        licenseSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:l-AbCdEf',
      },
    ];
    for (const context of contexts) {
      const runtime = parseSettings(RUNTIME_SETTINGS, 'context', read(context));
      const stack = parseSettings(STACK_SETTINGS, 'context', read(context));
      const values = new Proxy(stack.values as StackSettingValues, {
        get(target, property, receiver) {
          if (typeof property === 'string') seen.add(property);
          return Reflect.get(target, property, receiver);
        },
      });
      stackConfigOf(runtime.values as DeployedSettings, values, read(context));
    }
    const unread = Object.keys(STACK_SETTINGS).filter((key) => !seen.has(key) && !readByApp.has(key));
    expect(unread, 'declared in lib/stack-settings.ts, never read into StackConfig').toEqual([]);
  });
});

/**
 * @module function-environment
 * Each function's environment, from the settings catalogue (lambdas/platform/settings.ts): every
 * runtime setting that function reads, and nothing else. A deployable setting gets its deployed
 * value (context or default); one the stack sets gets the stack's value, fixed in the catalogue
 * or given here; one only Lambda or the local server sets is never written.
 */
import type { SettingReader } from '../lambdas/platform/names.ts';
import {
  environmentText,
  RUNTIME_SETTINGS,
  type RuntimeSettingName,
  type Setting,
} from '../lambdas/platform/settings.ts';
import type { DeployedSettings } from './stack-config.ts';

/** The runtime settings the stack sets from what it builds (no fixed value in the catalogue). */
export interface StackSetValues {
  /** The proxy-keys secret's ARN. */
  readonly proxyKeysSecretId: string;
  /** The license secret's ARN. */
  readonly licenseSecretId: string;
  /** The deployed log level, for Powertools' own variable. */
  readonly powertoolsLogLevel: string;
  /** The OAuth identity-map secret's ARN; `undefined` while OAuth is off (nothing is written). */
  readonly mcpOauthIdentitiesSecretId: string | undefined;
  /** The state table's name (idempotency records, limits, the operators' brakes: every function reads it). */
  readonly stateTable: string;
  /** The audit table's name. */
  readonly auditTable: string;
  /** The audit digest secret's ARN (the key of the audit's HMACs). */
  readonly auditDigestSecretId: string;
  /** Seconds before a `pending` audit record reads `unknown`: the writing functions' timeout and a margin. */
  readonly auditPendingAfterSeconds: string;
  /**
   * The bucket of the sealed audit windows, and the ARN of the key that signs the seals: the audit
   * sealer's alone, given only where the stack builds it (`auditSealing` not `off`).
   */
  readonly auditBucket?: string;
  readonly auditSealKeyId?: string;
}

/**
 * The environment of function `fn`.
 *
 * @example
 * functionEnvironment('execute-v1', config.settings, { proxyKeysSecretId: arn, ... })
 * // { ERP_V1_TRANSPORT: 'auto', ERP_DEFAULT_TIMEOUT: '15', ... } (no ERP_V2_TRANSPORT)
 */
export function functionEnvironment(
  fn: SettingReader,
  settings: DeployedSettings,
  stackSet: StackSetValues,
): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const [key, entry] of Object.entries(RUNTIME_SETTINGS) as [RuntimeSettingName, Setting][]) {
    if (entry.env === undefined || !entry.readBy.includes(fn)) continue;
    let value: string | undefined;
    if (entry.context !== undefined) {
      const deployed = (settings as Partial<Record<RuntimeSettingName, unknown>>)[key];
      value = deployed === undefined ? undefined : environmentText(deployed);
    } else if (entry.notDeployable?.by === 'stack') {
      value = entry.notDeployable.value ?? (stackSet as Partial<Record<RuntimeSettingName, string>>)[key];
      // A stack value given as `undefined` is a feature that is off (OAuth): nothing to write.
      if (value === undefined && !(key in stackSet))
        throw new Error(`the stack sets ${entry.env} but has no value for it`);
    }
    if (value !== undefined) environment[entry.env] = value;
  }
  return environment;
}

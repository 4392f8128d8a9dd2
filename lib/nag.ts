/**
 * @module nag
 * cdk-nag 3 (a CDK policy-validation plugin): the AwsSolutions pack runs on every synth of the
 * app; an unacknowledged finding fails the synth. Acknowledgments live next to the constructs
 * they concern (see erp-proxy-stack.ts), each with its reason.
 */
import { Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';

/** Registers the AwsSolutions checks on an app (or stage). */
export function addNagChecks(app: IConstruct): void {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
}

/** Acknowledges one cdk-nag finding on a construct and everything under it. */
export function acknowledge(scope: IConstruct, id: string, reason: string): void {
  Validations.of(scope).acknowledge({ id, reason });
}

/**
 * Every acknowledged rule id under a scope, sorted and without duplicates; the `Annotation::`
 * prefix CDK records for ids without a known namespace is removed.
 */
export function acknowledgedRuleIds(scope: IConstruct): string[] {
  const ids = new Set<string>();
  for (const node of scope.node.findAll()) {
    for (const entry of node.node.metadata) {
      if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
      const data: unknown = entry.data;
      if (data === null || typeof data !== 'object') continue;
      for (const key of Object.keys(data)) ids.add(key.replace(/^annotation::/i, ''));
    }
  }
  return [...ids].sort();
}

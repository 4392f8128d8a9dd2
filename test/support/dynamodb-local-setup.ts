/**
 * vitest `globalSetup`: starts one DynamoDB Local (test/support/dynamodb-local.ts) for the whole
 * run when the run includes a test file that uses it (one importing test/support/state-table.ts),
 * and stops it at the end. A run of other files starts nothing (no Java, no 3 s): the machines run
 * single test files often.
 */
import { readFile } from 'node:fs/promises';
import type { TestProject } from 'vitest/node';
import { type DynamoDbLocal, ENDPOINT_KEY, startDynamoDbLocal } from './dynamodb-local.ts';

/** What a test file that needs DynamoDB Local imports. */
const MARKER = 'support/state-table.ts';

let instance: DynamoDbLocal | undefined;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const { testFiles } = await project.globTestFiles(project.vitest.config.filters);
  const texts = await Promise.all(testFiles.map((file) => readFile(file, 'utf8').catch(() => '')));
  if (texts.some((text) => text.includes(MARKER))) {
    instance = await startDynamoDbLocal();
    project.provide(ENDPOINT_KEY, instance.endpoint);
  } else {
    project.provide(ENDPOINT_KEY, undefined);
  }
  return async () => {
    await instance?.stop();
    instance = undefined;
  };
}

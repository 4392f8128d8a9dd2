/**
 * @module handlers/state-table-check
 * The deploy's state table check (`platform/state/table-write-check.ts`), run by the stack's
 * trigger after the table and the functions exist: it throws, failing and rolling back the
 * deploy, when the functions' role cannot write the table. No route reaches it.
 */
import { getConfig } from '../platform/config.ts';
import {
  checkConfiguredStateTable,
  type StateTableCheckResult,
} from '../platform/state/table-write-check.ts';

export async function handler(): Promise<StateTableCheckResult> {
  return checkConfiguredStateTable(getConfig());
}

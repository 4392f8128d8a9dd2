/**
 * @module platform/brakes/brakes-item
 * The brakes' one item of the state table, and the operations on it: the store reads them
 * (brakes-store-dynamodb.ts) and the stack grants exactly them (lib/erp-proxy-stack.ts).
 */
import { STORE_KEY_PREFIX } from '../state/state-store.ts';

/** The item's partition key: the stack's grants name it. */
export const BRAKES_ITEM_KEY = `${STORE_KEY_PREFIX.brakes}set`;

/**
 * The DynamoDB operations on the brakes item: every function that serves calls reads it, and only
 * the aux function (`POST /_/brakes`) writes it. The stack grants exactly these, on that item alone.
 */
export const BRAKES_READ_OPERATIONS = Object.freeze(['GetItem'] as const);
export const BRAKES_WRITE_OPERATIONS = Object.freeze(['PutItem'] as const);

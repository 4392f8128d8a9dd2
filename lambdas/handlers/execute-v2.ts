/**
 * @module handlers/execute-v2
 * The entry of the execute-v2 function: `POST /v2/erp/execute`, written once with v1's in
 * `execute.ts`.
 */
import { EXECUTE_V2, executeFunction } from './execute.ts';
export const { createRuntime: createExecuteV2Runtime, createHandler, handler } = executeFunction(EXECUTE_V2);

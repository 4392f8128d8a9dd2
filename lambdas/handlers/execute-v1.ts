/**
 * @module handlers/execute-v1
 * The entry of the execute-v1 function: `POST /api/erp/execute` (alias `/v1/erp/execute`), written
 * once with v2's in `execute.ts`.
 */
import { EXECUTE_V1, executeFunction } from './execute.ts';
export const { createRuntime: createExecuteV1Runtime, createHandler, handler } = executeFunction(EXECUTE_V1);

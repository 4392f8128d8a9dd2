/**
 * The MCP layer's JSON-RPC check (protocol/mcp/messages.ts, by hand, so that no schema is built at
 * a cold start) agrees with the MCP SDK's `JSONRPCMessageSchema` (the oracle, the zod schema the
 * SDK transport checked messages with) on what a message is, and of which kind, for messages
 * built near the edges: ids, methods, params, `_meta`, results, errors, extra members.
 */
import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  JSONRPCMessageSchema,
} from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonRpcMessage } from '../../lambdas/protocol/mcp/messages.ts';

const absent = Symbol('absent');
const number = fc.oneof(
  fc.integer({ min: -5, max: 5 }),
  fc.constantFrom(1.5, -0, 2 ** 53, 2 ** 53 - 1, 1e20, Number.MAX_SAFE_INTEGER),
);
const scalar = fc.oneof(fc.string({ maxLength: 3 }), number, fc.boolean(), fc.constant(null));
const meta = fc.oneof(
  fc.constant(absent),
  scalar,
  fc.constant([]),
  fc.record(
    {
      progressToken: fc.oneof(scalar, fc.constant({})),
      'io.modelcontextprotocol/related-task': fc.oneof(
        scalar,
        fc.record({ taskId: scalar }, { requiredKeys: [] }),
      ),
      'io.modelcontextprotocol/protocolVersion': scalar,
      other: scalar,
    },
    { requiredKeys: [] },
  ),
);
const params = fc.oneof(
  fc.constant(absent),
  scalar,
  fc.constant([1]),
  fc.tuple(meta, fc.option(scalar)).map(([m, name]) => ({
    ...(m === absent ? {} : { _meta: m }),
    ...(name === null ? {} : { name }),
  })),
);
const errorObject = fc.oneof(
  scalar,
  fc.record(
    { code: fc.oneof(number, fc.string({ maxLength: 2 })), message: scalar, data: scalar },
    { requiredKeys: [] },
  ),
);
const member = <T>(arbitrary: fc.Arbitrary<T>) => fc.oneof(fc.constant(absent), arbitrary);
const message = fc
  .record({
    jsonrpc: member(fc.constantFrom('2.0', '1.0', 2)),
    id: member(fc.oneof(fc.string({ maxLength: 3 }), number, fc.constant(null), fc.constant({}))),
    method: member(fc.oneof(fc.string({ maxLength: 8 }), number)),
    params: params,
    result: member(
      fc.oneof(
        scalar,
        fc.constant([]),
        meta.map((m) => (m === absent ? {} : { _meta: m, x: 1 })),
      ),
    ),
    error: member(errorObject),
    extra: member(scalar),
  })
  .map((record) => Object.fromEntries(Object.entries(record).filter(([, value]) => value !== absent)));

/** The kind the SDK gives a message. */
function sdkKind(value: unknown): string | undefined {
  if (!JSONRPCMessageSchema.safeParse(value).success) return undefined;
  if (isJSONRPCRequest(value)) return 'request';
  if (isJSONRPCNotification(value)) return 'notification';
  if (isJSONRPCResultResponse(value) || isJSONRPCErrorResponse(value)) return 'response';
  return 'other';
}

describe('jsonRpcMessage', () => {
  it("says what a message is as the SDK's JSONRPCMessageSchema does", () => {
    fc.assert(
      fc.property(message, (value) => {
        expect(jsonRpcMessage(value)?.kind, JSON.stringify(value)).toBe(sdkKind(value));
      }),
      { numRuns: 3000 },
    );
  });

  it('takes every JSON value without throwing, as the SDK', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), (value) => {
        expect(jsonRpcMessage(value)?.kind).toBe(sdkKind(value));
      }),
      { numRuns: 500 },
    );
  });
});

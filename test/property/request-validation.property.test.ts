/**
 * Request validation, fuzzed: whatever JSON arrives, the parsers answer with a call or a
 * `ProxyError` (never a crash that would become -32603), v2 names are accepted exactly when an
 * independent reference says so, and header values that cannot travel are refused.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { InboundBody } from '../../lambdas/core/inbound-call.ts';
import * as requests from '../../lambdas/core/requests.ts';
import { V1_ACTIONS } from '../../lambdas/core/schemas.ts';
import { inboundBodyOfDocument } from '../../lambdas/middleware/json-body.ts';
import { InvalidV2TargetError, ProxyError } from '../../lambdas/platform/errors.ts';
import { readJsonDocument } from '../../lambdas/platform/json.ts';

const ERP_KEY = 'erp-user-key-MARKER-7f3a9c';

/** A body as the middleware hands it to the core, and the parsed value. */
interface ReadBody {
  readonly inbound: InboundBody;
  readonly body: unknown;
}

/** What `jsonBody` reads from a body sent as `JSON.stringify(body, null, indent)` (`JSON.parse`, as its parser, and the same scan). */
function stateWith(body: unknown, indent = 0): ReadBody {
  if (body === undefined) return { inbound: { ok: false }, body };
  const inbound = inboundBodyOfDocument(readJsonDocument(JSON.stringify(body, null, indent)));
  return { inbound, body: inbound.ok ? inbound.value : undefined };
}

const parseV1Call = (read: ReadBody) => requests.parseV1Call(read.inbound);
const parseV2Call = (read: ReadBody) => requests.parseV2Call(read.inbound);
const parseVersionTarget = (read: ReadBody) => requests.parseVersionTarget(read.inbound);

/** What a parser did with a body: returned, threw a ProxyError, or threw something else. */
function outcomeOf(parse: (read: ReadBody) => unknown, body: unknown): 'call' | 'proxy_error' | 'crash' {
  try {
    parse(stateWith(body));
    return 'call';
  } catch (error) {
    return error instanceof ProxyError ? 'proxy_error' : 'crash';
  }
}

// ---------------------------------------------------------------------------------------------
// Independent references, by character codes (no regular expressions shared with the product).
// ---------------------------------------------------------------------------------------------

const isLetter = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isWordChar = (c: number): boolean => isLetter(c) || isDigit(c) || c === 95; // _

/** Dotted identifiers: non-empty segments of letters, digits and `_`. */
function referenceModelName(name: string): boolean {
  return name
    .split('.')
    .every(
      (segment) =>
        segment.length > 0 && [...segment].every((ch) => isWordChar(ch.charCodeAt(0)) && ch.length === 1),
    );
}

/** A Python-style identifier in ASCII: a letter or `_`, then letters, digits or `_`. */
function referenceMethodName(name: string): boolean {
  if (name.length === 0) return false;
  for (let i = 0; i < name.length; i += 1) {
    const c = name.charCodeAt(i);
    if (i === 0 ? !(isLetter(c) || c === 95) : !isWordChar(c)) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Arbitraries
// ---------------------------------------------------------------------------------------------

/** Strings from a small alphabet that hits both sides of the name rules often. */
const nameLike = fc.string({
  unit: fc.constantFrom('a', 'Z', '_', '0', '9', '.', '.', '/', ' ', '%', '-', 'é', '\n', '\u0000'),
  maxLength: 12,
});
const anyString = fc.oneof(
  nameLike,
  fc.string({ unit: 'binary', maxLength: 16 }),
  fc.string({ maxLength: 16 }),
);

/** Bodies that look like requests, with any field replaced or removed. */
const instanceLike = fc.record(
  {
    url: fc.oneof(
      fc.constant('https://erp.example.com'),
      fc.constant('http://127.0.0.1:8069/odoo/'),
      fc.jsonValue(),
    ),
    db: fc.oneof(fc.constant('erp_a'), fc.jsonValue()),
    user_id: fc.oneof(fc.integer(), fc.jsonValue()),
    api_key: fc.oneof(fc.constant(ERP_KEY), fc.jsonValue()),
  },
  { requiredKeys: [] },
);
const requestLike = fc.record(
  {
    id: fc.oneof(fc.string(), fc.jsonValue()),
    action: fc.oneof(fc.constantFrom(...V1_ACTIONS), fc.jsonValue()),
    model_id: fc.oneof(fc.constant('res.partner'), anyString, fc.jsonValue()),
    method: fc.oneof(fc.constant('search'), anyString, fc.jsonValue()),
    fn_name: fc.oneof(anyString, fc.jsonValue()),
    params: fc.oneof(fc.constant([[]]), fc.jsonValue()),
    keyword: fc.oneof(fc.constant({}), fc.jsonValue()),
    kwargs: fc.oneof(fc.constant({}), fc.jsonValue()),
    url: fc.oneof(fc.constant('https://erp.example.com'), anyString, fc.jsonValue()),
    erp_instance: fc.oneof(instanceLike, fc.jsonValue()),
  },
  { requiredKeys: [] },
);
const anyBody = fc.oneof(fc.jsonValue(), requestLike, fc.constant(undefined));

const PARSERS = [
  ['parseV1Call', parseV1Call],
  ['parseV2Call', parseV2Call],
  ['parseVersionTarget', parseVersionTarget],
] as const;

describe.each(PARSERS)('%s on arbitrary JSON', (_name, parse) => {
  it('returns a call or throws a ProxyError, never anything else', () => {
    fc.assert(
      fc.property(anyBody, (body) => {
        expect(outcomeOf(parse, body)).not.toBe('crash');
      }),
      { numRuns: 1_000 },
    );
  });

  it('never shows the ERP key in an error message', () => {
    fc.assert(
      fc.property(requestLike, (body) => {
        try {
          parse(stateWith(body));
        } catch (error) {
          expect((error as Error).message).not.toContain(ERP_KEY);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('params, keyword and kwargs are forwarded as the client wrote them', () => {
  const instance = { url: 'https://erp.example.com', db: 'erp_a', user_id: 2, api_key: ERP_KEY };
  const jsonObject = fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 4 }));

  it('v1: the forwarded text is the JSON of exactly what was validated', () => {
    fc.assert(
      fc.property(
        fc.array(fc.jsonValue({ maxDepth: 4 }), { maxLength: 4 }),
        jsonObject,
        fc.integer({ min: 0, max: 3 }),
        (params, keyword, indent) => {
          const state = stateWith(
            {
              id: 'p',
              action: 'search_read',
              model_id: 'res.partner',
              params,
              keyword,
              erp_instance: instance,
            },
            indent,
          );
          const call = parseV1Call(state);
          const parsed = state.body as { params: unknown; keyword: unknown };
          expect(JSON.parse(call.argsJson ?? '')).toEqual(parsed.params);
          expect(JSON.parse(call.kwargsJson)).toEqual(parsed.keyword);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('v2: the forwarded text is the JSON of exactly what was validated', () => {
    fc.assert(
      fc.property(jsonObject, fc.integer({ min: 0, max: 3 }), (kwargs, indent) => {
        const state = stateWith(
          { id: 'p', model_id: 'res.partner', method: 'search', kwargs, erp_instance: instance },
          indent,
        );
        expect(JSON.parse(parseV2Call(state).kwargsJson)).toEqual((state.body as { kwargs: unknown }).kwargs);
      }),
      { numRuns: 500 },
    );
  });
});

describe('v2 model and method names', () => {
  const bodyWith = (model: string, method: string): Record<string, unknown> => ({
    id: 'p',
    model_id: model,
    method,
    kwargs: {},
    erp_instance: { url: 'https://erp.example.com', db: 'erp_a', api_key: ERP_KEY },
  });

  it('accepts exactly the model names the reference accepts', () => {
    fc.assert(
      fc.property(anyString, (model) => {
        // Act
        const outcome = outcomeOf(parseV2Call, bodyWith(model, 'search'));
        // Assess
        expect(outcome).toBe(referenceModelName(model) ? 'call' : 'proxy_error');
      }),
      { numRuns: 2_000 },
    );
  });

  it('accepts exactly the method names the reference accepts', () => {
    fc.assert(
      fc.property(anyString, (method) => {
        const outcome = outcomeOf(parseV2Call, bodyWith('res.partner', method));
        expect(outcome).toBe(referenceMethodName(method) ? 'call' : 'proxy_error');
      }),
      { numRuns: 2_000 },
    );
  });

  it('refuses bad names with -32007, not another error', () => {
    fc.assert(
      fc.property(
        anyString.filter((name) => !referenceMethodName(name)),
        (method) => {
          try {
            parseV2Call(stateWith(bodyWith('res.partner', method)));
          } catch (error) {
            expect(error).toBeInstanceOf(InvalidV2TargetError);
            return;
          }
          throw new Error(`method ${JSON.stringify(method)} was accepted`);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('v2 erp_instance.db travels in a header', () => {
  const bodyWithDb = (db: string): Record<string, unknown> => ({
    id: 'p',
    model_id: 'res.partner',
    method: 'search',
    kwargs: {},
    erp_instance: { url: 'https://erp.example.com', db, api_key: ERP_KEY },
  });

  const printable = fc.string({
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    maxLength: 12,
  });
  /** A character outside printable ASCII: control, DEL, Latin-1, any other code point. */
  const notPrintable = fc.oneof(
    fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)),
    fc.constant('\u007f'),
    fc.integer({ min: 0x80, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
  );

  it('refuses any db containing a character outside printable ASCII with -32007', () => {
    fc.assert(
      fc.property(printable, notPrintable, printable, (before, bad, after) => {
        const error = (() => {
          try {
            parseV2Call(stateWith(bodyWithDb(`${before}${bad}${after}`)));
          } catch (thrownError) {
            return thrownError;
          }
          return undefined;
        })();
        expect(error).toBeInstanceOf(InvalidV2TargetError);
        expect((error as InvalidV2TargetError).code).toBe(-32007);
      }),
      { numRuns: 1_000 },
    );
  });

  it('refuses any db with a leading or trailing space with -32007', () => {
    fc.assert(
      fc.property(printable, fc.constantFrom('lead', 'trail', 'both'), (core, where) => {
        const db = `${where === 'trail' ? '' : ' '}${core}${where === 'lead' ? '' : ' '}`;
        expect(outcomeOf(parseV2Call, bodyWithDb(db))).toBe('proxy_error');
      }),
      { numRuns: 500 },
    );
  });

  it('accepts any non-empty printable ASCII db without spaces around it', () => {
    fc.assert(
      fc.property(
        printable.filter((db) => db.length > 0 && !db.startsWith(' ') && !db.endsWith(' ')),
        (db) => {
          expect(outcomeOf(parseV2Call, bodyWithDb(db))).toBe('call');
        },
      ),
      { numRuns: 500 },
    );
  });
});

/**
 * @module upstream/v1-over-json2
 * A v1 call (positional `params`, named `keyword`) run over JSON-2, with v1's answer shapes
 * (README, "One envelope for every ERP version"; odoo bridge notes). Positional arguments get
 * their names from the method's signature: the built-in table for the 8 standard actions (the
 * ERP is never asked), the ERP's `/doc-bearer` documentation for `call_method`. Arguments are
 * moved as the bytes the caller wrote, never parsed and re-written.
 */
import { InvalidRequestError } from '../platform/errors.ts';
import { topLevelTexts } from '../platform/json.ts';
import type { CallContext, ErpCall, ErpOutcome } from './erp-transport.ts';
import type { Json2Transport } from './json2-transport.ts';
import type { MethodDocs } from './method-docs.ts';
import { builtInSignature, type MethodSignature } from './method-signatures.ts';
import { removedMethodRefusal } from './removed-methods.ts';

/** The JSON-2 body of a translated call, and how its answer becomes v1's. */
export interface Json2Translation {
  /** The named arguments: the JSON text of an object. */
  readonly body: string;
  /**
   * `create` was given one dict: v1 answers a bare id where JSON-2 answers `[id]`
   * (`odoo/service/model.py`: `result.id if isinstance(args[0], Mapping) else result.ids`).
   */
  readonly unwrapSingleId: boolean;
}

/** `[1, 2, 3]` (or `[]`): what a record method's ids look like in v1's `params[0]`. */
function isIdList(raw: string): boolean {
  if (!raw.startsWith('[')) return false;
  try {
    const value: unknown = JSON.parse(raw);
    return Array.isArray(value) && value.every((id) => Number.isSafeInteger(id));
  } catch {
    return false;
  }
}

function untranslatable(call: ErpCall, why: string): InvalidRequestError {
  return new InvalidRequestError(
    `Invalid request: ${call.model}.${call.method} cannot be sent over JSON-2 as written: ${why}. ` +
      'Pass the arguments by name in keyword, or call v2 (/v2/erp/execute) with named kwargs.',
  );
}

/**
 * Names `params` after `signature` and merges `keyword` (whose `context` is JSON-2's `context`
 * as it is). Without a signature, only `params` of `[]` or `[ids]` can be named. Throws -32600
 * for what cannot be translated exactly: more positional arguments than the method takes, one
 * given both by position and by name, or a method that needs `*args`.
 */
export function translateV1ToJson2(call: ErpCall, signature: MethodSignature | undefined): Json2Translation {
  const positional = topLevelTexts(call.argsJson ?? '[]').elements;
  const keyword = topLevelTexts(call.kwargsJson).members;
  const named = new Map<string, string>();
  let unwrapSingleId = false;

  if (!signature) {
    const [first] = positional;
    if (positional.length > 1 || (first !== undefined && !isIdList(first))) {
      throw untranslatable(
        call,
        'the ERP does not document this method for this key (its documentation needs the "Technical Documentation" group), ' +
          'so only params of [] or [ids] can be named',
      );
    }
    if (first !== undefined) named.set('ids', first);
  } else {
    let rest = positional;
    if (!signature.model && rest.length > 0) {
      named.set('ids', rest[0] as string);
      rest = rest.slice(1);
    }
    let index = 0;
    for (const param of signature.params) {
      if (index >= rest.length) break;
      if (param.kind === 'VAR_POSITIONAL')
        throw untranslatable(call, `it takes *${param.name}, which JSON-2 cannot pass`);
      if (param.kind !== 'POSITIONAL_ONLY' && param.kind !== 'POSITIONAL_OR_KEYWORD') break;
      named.set(param.name, rest[index] as string);
      index += 1;
    }
    if (index < rest.length) {
      const takes = signature.params.filter(
        (param) => param.kind === 'POSITIONAL_ONLY' || param.kind === 'POSITIONAL_OR_KEYWORD',
      ).length;
      throw untranslatable(
        call,
        `params holds ${positional.length} positional arguments, more than it takes (${takes}${signature.model ? '' : ' after the ids'})`,
      );
    }
    if (call.method === 'create' && signature.model) {
      const vals = named.get('vals_list');
      if (vals?.startsWith('{')) {
        named.set('vals_list', `[${vals}]`);
        unwrapSingleId = true;
      }
    }
  }

  for (const [name, value] of keyword) {
    if (named.has(name)) {
      throw untranslatable(call, `"${name.slice(0, 80)}" is given both in params and in keyword`);
    }
    named.set(name, value);
  }
  const body = `{${[...named].map(([name, value]) => `${JSON.stringify(name)}:${value}`).join(',')}}`;
  return { body, unwrapSingleId };
}

/** v1's shape of a JSON-2 outcome: ERP errors with code 0, a single created id bare. */
export function toV1Outcome(outcome: ErpOutcome, translation: Json2Translation): ErpOutcome {
  if (outcome.kind === 'erp_error') return { ...outcome, code: 0 };
  if (!translation.unwrapSingleId || outcome.kind !== 'raw_result') return outcome;
  const value: unknown = JSON.parse(outcome.json.toString('utf8'));
  return Array.isArray(value) && value.length === 1 ? { kind: 'result', value: value[0] } : outcome;
}

/**
 * v1 calls over JSON-2, to an ERP of a known major version: the signature of that version, the
 * translation, the call, v1's answer. A call written for ERP 16-19 that 20+ no longer takes is
 * refused first (-32600, `removed-methods.ts`).
 */
export class V1OverJson2 {
  constructor(
    private readonly json2: Json2Transport,
    private readonly docs: MethodDocs,
  ) {}

  async call(call: ErpCall, context: CallContext, major: number | undefined): Promise<ErpOutcome> {
    const refusal = removedMethodRefusal(call, major);
    if (refusal !== undefined) throw new InvalidRequestError(refusal);
    const signature = await this.signatureOf(call, context, major);
    const translation = translateV1ToJson2(call, signature);
    const outcome = await this.json2.call({ ...call, kwargsJson: translation.body }, context);
    return toV1Outcome(outcome, translation);
  }

  /**
   * The 8 standard actions: the built-in table of the ERP's version. `call_method`: the ERP's
   * documentation, then the built-in table (deprecated methods such as 19's `read_group` are not
   * documented), else none.
   */
  private async signatureOf(
    call: ErpCall,
    context: CallContext,
    major: number | undefined,
  ): Promise<MethodSignature | undefined> {
    const builtIn = builtInSignature(call.method, major);
    if (call.standardAction) return builtIn;
    const doc = await this.docs.lookup(call, call.method, context);
    return doc.kind === 'documented' ? doc.signature : builtIn;
  }
}

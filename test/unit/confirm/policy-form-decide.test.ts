/**
 * Which calls a person confirms and how the policy field is checked at load
 * (lambdas/core/confirm/policy.ts, lambdas/platform/key-policy.ts), the form they are shown
 * (lambdas/core/confirm/form.ts), and the confirmation step's decision (lambdas/core/confirm/decide.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ConfirmDeps,
  type ConfirmRequest,
  decideConfirmation,
  declaresFormElicitation,
  useConfirmation,
} from '../../../lambdas/core/confirm/decide.ts';
import {
  checkConfirmable,
  confirmationForm,
  confirmationMessage,
  type FormFacts,
  MAX_CONFIRMED_IDS,
  MAX_LISTED_RECORDS,
  MAX_LISTED_VALUES,
  MAX_VALUE_CHARS,
  quotedValue,
} from '../../../lambdas/core/confirm/form.ts';
import { generatedSealKeys } from '../../../lambdas/core/confirm/keys.ts';
import {
  checkKeysConfirm,
  confirmPolicyProblem,
  refuseUnconfirmedWrite,
} from '../../../lambdas/core/confirm/policy.ts';
import type { ConfirmBinding } from '../../../lambdas/core/confirm/state.ts';
import { TOOLS } from '../../../lambdas/core/mcp/tools.ts';
import { needsConfirmation, WRITE_TOOL_NAMES } from '../../../lambdas/core/mcp/write-tools.ts';
import { createMcpRuntime } from '../../../lambdas/handlers/mcp.ts';
import { createRuntime } from '../../../lambdas/handlers/runtime.ts';
import { loadConfig, parseProxyKeys } from '../../../lambdas/platform/config.ts';
import { KeyPolicyRefusedError, UpstreamUnavailableError } from '../../../lambdas/platform/errors.ts';
import { compileKeyPolicy, type KeyPolicy, keyPolicySchema } from '../../../lambdas/platform/key-policy.ts';
import { EmbeddedStateStore } from '../../../lambdas/platform/state/state-store-embedded.ts';
import { parseIdentities } from '../../../lambdas/protocol/oauth/identities.ts';

const policyOf = (document: unknown): KeyPolicy => compileKeyPolicy(keyPolicySchema().parse(document));
const tool = (name: string) => TOOLS.find((t) => t.name === name) as (typeof TOOLS)[number];

function keysDocument(policy: unknown): string {
  return JSON.stringify({ keys: [{ name: 'agent', key: 'a-long-enough-proxy-key', policy }] });
}

describe('the policy field confirm', () => {
  it('takes "writes" or a list of tool names; anything else fails the document naming the key', () => {
    expect(policyOf({ confirm: 'writes' }).confirm).toBe('writes');
    expect(policyOf({ confirm: ['create', 'write'] }).confirm).toEqual(new Set(['create', 'write']));
    expect(policyOf({}).confirm).toBeUndefined();
    for (const bad of ['all', [], ['write', 'write'], [1], 'Writes']) {
      expect(() => parseProxyKeys(keysDocument({ confirm: bad }))).toThrow(
        /keys\.0\.policy\.confirm \(key "agent"\)/,
      );
    }
  });

  it('names only write tools of the tool declarations (one list): another name fails at load, naming the key', () => {
    expect(WRITE_TOOL_NAMES).toEqual(TOOLS.filter((t) => t.writes).map((t) => t.name));
    expect(() =>
      checkKeysConfirm(parseProxyKeys(keysDocument({ confirm: ['write', 'search_read'] })), WRITE_TOOL_NAMES),
    ).toThrow(
      /^proxy keys: keys\.0\.policy\.confirm \(key "agent"\): confirm names "search_read", which is not a write tool; the write tools are create, write, unlink, call_method/,
    );
    expect(() =>
      checkKeysConfirm(parseProxyKeys(keysDocument({ confirm: ['writ'] })), WRITE_TOOL_NAMES),
    ).toThrow(/"writ"/);
    expect(() =>
      checkKeysConfirm(parseProxyKeys(keysDocument({ confirm: WRITE_TOOL_NAMES })), WRITE_TOOL_NAMES),
    ).not.toThrow();
    // Without the tool declarations (the execute, version and aux functions) the names go unchecked:
    // those functions refuse every write of a confirming key (rule confirm) whatever it names.
    expect(() => checkKeysConfirm(parseProxyKeys(keysDocument({ confirm: ['writ'] })))).not.toThrow();
  });

  it('checks the names where the tools are served: the mcp function and the local server', () => {
    const config = loadConfig({ PROXY_API_KEYS: keysDocument({ confirm: ['writ'] }) });
    expect(() => createMcpRuntime(config)).toThrow(/"writ"/);
    expect(() => createRuntime(config)).toThrow(/"writ"/);
  });

  it('fails on a policy that cannot write through /mcp', () => {
    for (const policy of [
      { access: 'read', confirm: 'writes' },
      { apis: ['v1', 'v2'], confirm: ['create'] },
    ]) {
      expect(confirmPolicyProblem(policyOf(policy))).toMatch(/cannot make any/);
      expect(() => checkKeysConfirm(parseProxyKeys(keysDocument(policy)))).toThrow(/\(key "agent"\)/);
    }
    expect(confirmPolicyProblem(policyOf({ apis: ['mcp'], confirm: 'writes' }))).toBeUndefined();
  });

  it('fails an identity map whose entry names no write tool, naming the entry', () => {
    const map = (confirm: unknown) =>
      JSON.stringify({
        identities: [
          {
            name: 'sales',
            match: { claim: 'sub', value: 'u1' },
            erp: { url: 'https://erp.example.com', db: 'prod', api_key: 'k' },
            policy: { confirm },
          },
        ],
      });
    expect(() => parseIdentities(map(['read']))).toThrow(
      /^OAuth identities: identities\.0\.policy\.confirm \(identity "sales"\): confirm names "read"/,
    );
    expect(parseIdentities(map('writes'))[0]?.policy?.confirm).toBe('writes');
  });

  it('asks for the write tools named, never for reads (a call_method of a read method included)', () => {
    const all = policyOf({ confirm: 'writes' });
    const some = policyOf({ confirm: ['unlink'] });
    expect(needsConfirmation(all, tool('create'), { model: 'x', values: {} })).toBe(true);
    expect(needsConfirmation(all, tool('search_read'), { model: 'x' })).toBe(false);
    expect(needsConfirmation(all, tool('call_method'), { model: 'x', method: 'name_search' })).toBe(false);
    expect(needsConfirmation(all, tool('call_method'), { model: 'x', method: 'action_archive' })).toBe(true);
    expect(needsConfirmation(some, tool('create'), {})).toBe(false);
    expect(needsConfirmation(some, tool('unlink'), {})).toBe(true);
    expect(needsConfirmation(undefined, tool('unlink'), {})).toBe(false);
  });

  it('refuses execute writes of a confirming key (-32008, rule confirm), reads pass', () => {
    const policy = policyOf({ confirm: ['create'] });
    expect(() => refuseUnconfirmedWrite(policy, 'search_read')).not.toThrow();
    expect(() => refuseUnconfirmedWrite(undefined, 'write')).not.toThrow();
    let thrown: unknown;
    try {
      refuseUnconfirmedWrite(policy, 'write');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(KeyPolicyRefusedError);
    expect(thrown).toMatchObject({ code: -32008, rule: 'confirm' });
    expect((thrown as Error).message).toMatch(/only POST \/mcp can ask/);
  });
});

const FACTS: FormFacts = {
  tool: 'write',
  args: { model: 'res.partner', ids: [7, 8], values: { name: 'Acme', comment: 'x'.repeat(500) } },
  erpUrl: 'https://erp.example.com/',
  db: 'prod',
  modelName: 'Contact',
  recordNames: new Map([[7, 'Azure Interior']]),
};

describe('the form', () => {
  it('says where, what, to which records and with which values, and asks nothing to type', () => {
    const form = confirmationForm(FACTS);
    expect(form).toMatchObject({
      method: 'elicitation/create',
      params: { mode: 'form', requestedSchema: { type: 'object', properties: {} } },
    });
    const lines = form.params.message.split('\n');
    expect(lines).toContain('ERP: "https://erp.example.com/", database "prod"');
    expect(lines).toContain('Update 2 records of "Contact" ("res.partner").');
    expect(lines).toContain('  - id 7: "Azure Interior"');
    expect(lines).toContain('  - id 8: (no name could be read)');
    expect(lines).toContain('  - "name": "Acme"');
    // Shown whole: nothing is cut from a form.
    expect(lines).toContain(`  - "comment": "${'x'.repeat(500)}"`);
  });

  it('lists 20 records by name, then every other id', () => {
    const ids = Array.from({ length: 45 }, (_, i) => i + 1);
    const message = confirmationMessage({ ...FACTS, tool: 'unlink', args: { model: 'res.partner', ids } });
    expect(message).toContain('Delete 45 records of "Contact" ("res.partner"), for good.');
    expect(message.split('\n').filter((line) => line.startsWith('  - id '))).toHaveLength(MAX_LISTED_RECORDS);
    expect(message).toContain(`  - and 25 more: ids ${ids.slice(20).join(', ')}`);
  });

  it('shows the context the ERP will read (a default_* value included), member by member', () => {
    const message = confirmationMessage({
      ...FACTS,
      tool: 'create',
      args: {
        model: 'res.partner',
        values: { name: 'N' },
        context: { lang: 'fr_FR', default_function: 'CEO' },
      },
    });
    const lines = message.split('\n');
    expect(lines).toContain('Context (the ERP reads these too):');
    expect(lines).toContain('  - "default_function": "CEO"');
    expect(lines).toContain('  - "lang": "fr_FR"');
  });

  it('shows each positional argument of a method on its own line, whole', () => {
    const long = 'y'.repeat(900);
    const message = confirmationMessage({
      ...FACTS,
      tool: 'call_method',
      args: { model: 'res.partner', method: 'message_post', ids: [7], args: [long, 3] },
    });
    expect(message.split('\n')).toEqual(
      expect.arrayContaining(['Arguments:', `  - 1: "${long}"`, '  - 2: 3']),
    );
  });

  it.each([
    ['\u202e', '\\u202e'],
    ['\u2028', '\\u2028'],
    ['\u2029', '\\u2029'],
    ['\u200b', '\\u200b'],
    ['\u2066', '\\u2066'],
    ['\u0085', '\\u0085'],
    ['\u00ad', '\\u00ad'],
    ['\ufeff', '\\ufeff'],
    ['\u{e0041}', '\\udb40\\udc41'],
    ['\u3164', '\\u3164'],
  ])('escapes %j, which does not show as itself', (character, escaped) => {
    expect(quotedValue(`a${character}b`)).toBe(`"a${escaped}b"`);
    const message = confirmationMessage({
      ...FACTS,
      args: { model: 'res.partner', ids: [7], values: { name: `a${character}b` } },
    });
    expect(message).not.toContain(character);
    expect(message).toContain(`  - "name": "a${escaped}b"`);
  });

  it('refuses, naming it, a call it cannot show whole: a value too long, too many values or records', () => {
    const refusal = (args: Record<string, unknown>, tool = 'write') => {
      try {
        checkConfirmable(tool, args);
      } catch (error) {
        expect(error).toBeInstanceOf(KeyPolicyRefusedError);
        expect(error).toMatchObject({ code: -32008, rule: 'confirm' });
        return (error as Error).message;
      }
      return undefined;
    };
    expect(refusal({ model: 'res.partner', ids: [7], values: { name: 'ok' } })).toBeUndefined();
    expect(
      refusal({ model: 'res.partner', ids: [7], values: { comment: 'x'.repeat(MAX_VALUE_CHARS) } }),
    ).toMatch(/the value of "comment" is 2002 characters long as shown, more than the 2000/);
    // Escapes count as shown: 700 bidirectional overrides are 4200 characters on the form.
    expect(refusal({ model: 'res.partner', ids: [7], values: { name: '\u202e'.repeat(700) } })).toMatch(
      /the value of "name"/,
    );
    expect(
      refusal(
        { model: 'res.partner', values: { name: 'n' }, context: { default_comment: 'z'.repeat(3000) } },
        'create',
      ),
    ).toMatch(/the context key "default_comment" is 3002 characters long/);
    expect(
      refusal({ model: 'm', method: 'x', ids: [1], args: ['a', 'b'.repeat(2500)] }, 'call_method'),
    ).toMatch(/argument 2 is 2502 characters/);
    const values = Object.fromEntries(Array.from({ length: MAX_LISTED_VALUES + 1 }, (_, i) => [`f${i}`, i]));
    expect(refusal({ model: 'res.partner', ids: [7], values })).toMatch(
      /sends 101 values, more than the 100/,
    );
    const ids = Array.from({ length: MAX_CONFIRMED_IDS + 1 }, (_, i) => i + 1);
    expect(refusal({ model: 'res.partner', ids }, 'unlink')).toMatch(/names 1001 records/);
    expect(() => confirmationMessage({ ...FACTS, args: { model: 'res.partner', ids: [7], values } })).toThrow(
      KeyPolicyRefusedError,
    );
  });

  it('describes create and a method call', () => {
    expect(
      confirmationMessage({
        ...FACTS,
        tool: 'create',
        args: { model: 'res.partner', values: { name: 'N' } },
      }),
    ).toContain('Create 1 record of "Contact" ("res.partner").');
    const method = confirmationMessage({
      ...FACTS,
      tool: 'call_method',
      modelName: undefined,
      args: { model: 'res.partner', method: 'action_archive', ids: [7], kwargs: { reason: 'old' } },
    });
    expect(method).toContain('Call the method "action_archive" on 1 record of "res.partner".');
    expect(method).toContain('  - "reason": "old"');
  });

  it('property: a value or a name from the call or the ERP never adds a line or unquoted text', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary' }),
        fc.string({ unit: 'binary' }),
        fc.string({ unit: 'binary' }),
        (value, field, name) => {
          const message = confirmationMessage({
            ...FACTS,
            args: { model: 'res.partner', ids: [7], values: { [field]: value } },
            recordNames: new Map([[7, name]]),
          });
          const plain = confirmationMessage({
            ...FACTS,
            args: { model: 'res.partner', ids: [7], values: { f: 'v' } },
            recordNames: new Map([[7, 'n']]),
          });
          expect(message.split('\n').length).toBe(plain.split('\n').length);
          const valueLine = message.split('\n').find((line) => line.startsWith('  - "')) as string;
          expect(valueLine.startsWith(`  - ${quotedValue(field)}: `)).toBe(true);
          // Nothing that does not show as itself is left unescaped (the form's own line breaks aside).
          expect(message.replaceAll('\n', '')).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u);
        },
      ),
    );
  });
});

const BINDING: ConfirmBinding = {
  caller: 'key:agent',
  tool: 'create',
  args: { model: 'res.partner', values: { name: 'Acme' } },
  erp: { url: 'https://erp.example.com/', db: 'prod', uid: 2, apiKey: 'k' },
};

function deps(overrides: Partial<ConfirmDeps> = {}): ConfirmDeps {
  return { keys: generatedSealKeys(), store: new EmbeddedStateStore(), ttlSeconds: 600, ...overrides };
}

const MODERN: ConfirmRequest = {
  era: 'modern',
  formElicitation: true,
  requestState: undefined,
  inputResponses: undefined,
};

describe('CONFIRM_TTL', () => {
  it('is 10 minutes by default, at most 60, at least 30 seconds', () => {
    expect(loadConfig({}).confirmTtlSeconds).toBe(600);
    expect(loadConfig({ CONFIRM_TTL: '3600' }).confirmTtlSeconds).toBe(3600);
    expect(() => loadConfig({ CONFIRM_TTL: '3601' })).toThrow(/CONFIRM_TTL/);
    expect(() => loadConfig({ CONFIRM_TTL: '29' })).toThrow(/CONFIRM_TTL/);
  });
});

describe('the confirmation step decides', () => {
  it('reads form elicitation from the declared capabilities (an empty object means form)', () => {
    expect(declaresFormElicitation({ elicitation: {} })).toBe(true);
    expect(declaresFormElicitation({ elicitation: { form: {} } })).toBe(true);
    expect(declaresFormElicitation({ elicitation: { url: {} } })).toBe(false);
    expect(declaresFormElicitation({})).toBe(false);
    expect(declaresFormElicitation(undefined)).toBe(false);
  });

  it('refuses a legacy client and a 2026-07-28 request without elicitation', async () => {
    expect(await decideConfirmation({ ...MODERN, era: 'legacy' }, BINDING, deps())).toMatchObject({
      kind: 'refused',
      refusal: { kind: 'legacy' },
    });
    expect(await decideConfirmation({ ...MODERN, formElicitation: false }, BINDING, deps())).toMatchObject({
      kind: 'refused',
      refusal: { kind: 'capability' },
    });
  });

  it('asks, then takes the answer that comes back with the state', async () => {
    const d = deps();
    const asked = await decideConfirmation(MODERN, BINDING, d);
    expect(asked).toMatchObject({ kind: 'ask', outcome: 'asked' });
    const requestState = asked.kind === 'ask' ? asked.seal().requestState : '';
    const answer = (action: unknown) =>
      decideConfirmation({ ...MODERN, requestState, inputResponses: { confirm: { action } } }, BINDING, d);
    expect(await answer('accept')).toMatchObject({ kind: 'accepted', outcome: 'accepted' });
    expect(await answer('decline')).toMatchObject({ kind: 'answered', outcome: 'declined' });
    expect(await answer('cancel')).toMatchObject({ kind: 'answered', outcome: 'cancelled' });
    expect(await answer('yes')).toMatchObject({
      kind: 'refused',
      refusal: { kind: 'invalid', why: 'answer' },
    });
    // Without an answer: asked again, with a new state.
    const again = await decideConfirmation({ ...MODERN, requestState }, BINDING, d);
    expect(again).toMatchObject({ kind: 'ask', outcome: 'asked' });
    expect(again.kind === 'ask' && again.seal().requestState).not.toBe(requestState);
  });

  it('asks again for an expired state, refuses one for another call', async () => {
    let now = Date.UTC(2026, 10, 29, 3, 0, 0);
    const d = deps({ now: () => now });
    const asked = await decideConfirmation(MODERN, BINDING, d);
    const requestState = asked.kind === 'ask' ? asked.seal().requestState : '';
    const accept = { confirm: { action: 'accept' } };
    expect(
      await decideConfirmation(
        { ...MODERN, requestState, inputResponses: accept },
        { ...BINDING, caller: 'key:x' },
        d,
      ),
    ).toMatchObject({ kind: 'refused', refusal: { kind: 'invalid', why: 'caller' }, outcome: 'invalid' });
    now += 600_000;
    expect(
      await decideConfirmation({ ...MODERN, requestState, inputResponses: accept }, BINDING, d),
    ).toMatchObject({
      kind: 'ask',
      outcome: 'expired',
    });
  });

  it('uses an accepted confirmation once; without a store, or with one down, nothing runs (-32004)', async () => {
    const d = deps();
    const accepted = { nonce: 'n-1', expiresAt: Date.now() + 60_000 };
    expect(await useConfirmation(accepted, d)).toBe(true);
    expect(await useConfirmation(accepted, d)).toBe(false);
    await expect(useConfirmation(accepted, deps({ store: undefined }))).rejects.toBeInstanceOf(
      UpstreamUnavailableError,
    );
    const down = new EmbeddedStateStore();
    down.markOnce = async () => {
      throw new Error('down');
    };
    await expect(useConfirmation(accepted, deps({ store: down }))).rejects.toMatchObject({ code: -32004 });
  });
});

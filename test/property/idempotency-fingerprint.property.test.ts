/**
 * The idempotency fingerprint (lambdas/core/idempotency.ts over `canonicalJson` of
 * lambdas/platform/json.ts) ignores the envelope `id` and the order of object members, and nothing
 * else: two bodies are one request exactly when they are the same tree with the same number
 * spellings (`1.0` is not `1`, `12345678901234567890` is not `...891`), whatever the whitespace,
 * member order, string escapes and `id`. Fields the caller says are ignored (v2's `user_id`) are
 * left out; the route is part of it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fingerprintOf } from '../../lambdas/core/idempotency.ts';
import { canonicalJson, readJsonDocument } from '../../lambdas/platform/json.ts';

/** A JSON tree whose numbers are spellings: what the fingerprint must tell apart. */
type Tree =
  | { readonly kind: 'number'; readonly text: string }
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'literal'; readonly text: 'true' | 'false' | 'null' }
  | { readonly kind: 'array'; readonly items: readonly Tree[] }
  | { readonly kind: 'object'; readonly members: readonly (readonly [string, Tree])[] };

/** Number spellings, near twins included: each pair reads differently to an ERP. */
const numberText = fc.oneof(
  fc.constantFrom('1', '1.0', '1e0', '1E0', '10', '-0', '0', '0.1', '0.10', '2.5e-3'),
  fc.constantFrom('12345678901234567890', '12345678901234567891', '9007199254740993', '9007199254740992'),
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => JSON.stringify(value)),
);

const { tree } = fc.letrec<{ tree: Tree }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    numberText.map((text): Tree => ({ kind: 'number', text })),
    fc.string({ maxLength: 6 }).map((value): Tree => ({ kind: 'string', value })),
    fc.constantFrom('true', 'false', 'null').map((text): Tree => ({ kind: 'literal', text })),
    fc.array(tie('tree'), { maxLength: 4 }).map((items): Tree => ({ kind: 'array', items })),
    fc
      .uniqueArray(fc.tuple(fc.string({ maxLength: 4 }), tie('tree')), {
        maxLength: 4,
        selector: ([name]) => name,
      })
      .map((members): Tree => ({ kind: 'object', members })),
  ),
}));

/** A body: top-level members other than `id`, with unique names. */
const body = fc.uniqueArray(
  fc.tuple(
    fc.string({ maxLength: 6 }).filter((name) => name !== 'id'),
    tree,
  ),
  { maxLength: 5, selector: ([name]) => name },
);

/** Writes a string with some characters escaped (`\u0041` for `A`): the same string to an ERP. */
function stringText(value: string, escaped: boolean): string {
  if (!escaped) return JSON.stringify(value);
  return `"${value
    .split('')
    .map((ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .join('')}"`;
}

/** JSON text of a tree, members in an order `shuffle` picks, whitespace and escapes as `style` says. */
function write(
  node: Tree,
  shuffle: (n: number) => number[],
  style: { space: string; escape: boolean },
): string {
  const { space } = style;
  switch (node.kind) {
    case 'number':
    case 'literal':
      return node.text;
    case 'string':
      return stringText(node.value, style.escape);
    case 'array':
      return `[${space}${node.items.map((item) => write(item, shuffle, style)).join(`,${space}`)}${space}]`;
    case 'object': {
      const order = shuffle(node.members.length);
      const parts = order.map((i) => {
        const [name, value] = node.members[i] as readonly [string, Tree];
        return `${stringText(name, style.escape)}${space}:${space}${write(value, shuffle, style)}`;
      });
      return `{${space}${parts.join(`,${space}`)}${space}}`;
    }
  }
}

/** The fingerprint of a body text, as the execute routes compute it (members as the scan gives them). */
function fingerprint(text: string, route = 'v1'): string {
  const document = readJsonDocument(text);
  if (!document.ok) throw new Error('not JSON');
  return fingerprintOf(route, document.members);
}

/** A permutation source from a seed, so two writings of one tree can order members differently. */
function shuffler(seed: number): (n: number) => number[] {
  let state = seed >>> 0 || 1;
  return (n) => {
    const order = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i -= 1) {
      state = (state * 1103515245 + 12345) >>> 0;
      const j = state % (i + 1);
      [order[i], order[j]] = [order[j] as number, order[i] as number];
    }
    return order;
  };
}

function bodyText(
  members: readonly (readonly [string, Tree])[],
  id: string | undefined,
  seed: number,
  style: { space: string; escape: boolean },
): string {
  const all: (readonly [string, Tree])[] = [...members];
  if (id !== undefined) all.push(['id', { kind: 'string', value: id }]);
  return write({ kind: 'object', members: all }, shuffler(seed), style);
}

const style = fc.record({ space: fc.constantFrom('', ' ', '\n\t'), escape: fc.boolean() });

/** Structural equality with number spellings compared as text, member order ignored. */
function sameTree(a: Tree, b: Tree): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'number' || a.kind === 'literal') return a.text === (b as typeof a).text;
  if (a.kind === 'string') return a.value === (b as typeof a).value;
  if (a.kind === 'array') {
    const items = (b as typeof a).items;
    return a.items.length === items.length && a.items.every((item, i) => sameTree(item, items[i] as Tree));
  }
  const other = new Map((b as typeof a).members);
  return (
    a.members.length === other.size &&
    a.members.every(([name, value]) => other.has(name) && sameTree(value, other.get(name) as Tree))
  );
}

describe('the idempotency fingerprint', () => {
  it('ignores the id, member order, whitespace and string escapes', () => {
    fc.assert(
      fc.property(
        body,
        fc.option(fc.string({ maxLength: 8 }), { nil: undefined }),
        fc.option(fc.string({ maxLength: 8 }), { nil: undefined }),
        fc.integer(),
        fc.integer(),
        style,
        style,
        (members, id1, id2, seed1, seed2, style1, style2) => {
          expect(fingerprint(bodyText(members, id1, seed1, style1))).toBe(
            fingerprint(bodyText(members, id2, seed2, style2)),
          );
        },
      ),
    );
  });

  it('and nothing else: two bodies share a fingerprint exactly when they are the same tree with the same number spellings', () => {
    fc.assert(
      fc.property(body, body, fc.integer(), style, (a, b, seed, writing) => {
        const same = sameTree({ kind: 'object', members: a }, { kind: 'object', members: b });
        const equal =
          fingerprint(bodyText(a, 'x', seed, writing)) === fingerprint(bodyText(b, 'y', seed, writing));
        expect(equal).toBe(same);
      }),
    );
  });

  it('tells one changed number spelling or big-integer digit apart, however deep', () => {
    fc.assert(
      fc.property(
        body,
        fc.constantFrom(
          ['1', '1.0'],
          ['12345678901234567890', '12345678901234567891'],
          ['1e2', '100'],
          ['0', '-0'],
        ),
        fc.integer({ min: 0, max: 3 }),
        (members, [one, other], depth) => {
          let a: Tree = { kind: 'number', text: one };
          let b: Tree = { kind: 'number', text: other };
          for (let i = 0; i < depth; i += 1) {
            a = i % 2 ? { kind: 'array', items: [a] } : { kind: 'object', members: [['n', a]] };
            b = i % 2 ? { kind: 'array', items: [b] } : { kind: 'object', members: [['n', b]] };
          }
          const plain = { space: '', escape: false };
          const withA = [...members.filter(([name]) => name !== 'deep'), ['deep', a] as const];
          const withB = [...members.filter(([name]) => name !== 'deep'), ['deep', b] as const];
          expect(fingerprint(bodyText(withA, '1', 1, plain))).not.toBe(
            fingerprint(bodyText(withB, '1', 1, plain)),
          );
        },
      ),
    );
  });

  it('is another for another route, and leaves out the members the caller names (v2 user_id)', () => {
    const text = (userId: string) =>
      `{"id":"1","model_id":"res.partner","method":"create","kwargs":{},"erp_instance":{"url":"http://e","db":"d","api_key":"k","user_id":${userId}}}`;
    expect(fingerprint(text('2'), 'v1')).not.toBe(fingerprint(text('2'), 'v2'));
    const members = (userId: string) => {
      const document = readJsonDocument(text(userId));
      if (!document.ok) throw new Error('not JSON');
      return document.members;
    };
    const userId = (path: readonly string[]) => path.join('.') === 'erp_instance.user_id';
    expect(fingerprintOf('v2', members('2'), userId)).toBe(fingerprintOf('v2', members('7'), userId));
    expect(fingerprintOf('v2', members('2'))).not.toBe(fingerprintOf('v2', members('7')));
  });
});

describe('canonicalJson', () => {
  it('sorts members, drops whitespace, normalises string escapes, keeps number spellings', () => {
    expect(canonicalJson(' { "b" : 1.0 , "a" : [ "\\u0041" , 12345678901234567890 , 1e2 ] } ')).toBe(
      '{"a":["A",12345678901234567890,1e2],"b":1.0}',
    );
  });

  it('keeps the last of a repeated member, as JSON.parse does', () => {
    expect(canonicalJson('{"a":1,"b":2,"a":3}')).toBe('{"a":3,"b":2}');
  });

  it('refuses text that is not JSON (a caller bug)', () => {
    expect(() => canonicalJson('{"a":}')).toThrow(/not JSON/);
  });
});

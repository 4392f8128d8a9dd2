/**
 * @module erp-double/domain
 * Odoo search domains: parsing (prefix notation, as Odoo 19's `Domain()`), validation and evaluation.
 */
import type { Database, Row } from './database.ts';
import { pyError } from './errors.ts';
import type { FieldDef } from './models.ts';
import { pyRepr, pyTupleRepr } from './py.ts';

/** A parsed domain. */
export type DomainNode =
  | { kind: 'true' }
  | { kind: 'and' | 'or'; children: DomainNode[] }
  | { kind: 'not'; child: DomainNode }
  | { kind: 'condition'; path: string[]; operator: string; value: unknown; raw: readonly unknown[] };

const OPERATORS: ReadonlySet<string> = new Set([
  '=',
  '!=',
  '<>',
  '>',
  '>=',
  '<',
  '<=',
  'in',
  'not in',
  'like',
  'not like',
  'ilike',
  'not ilike',
  '=like',
  '=ilike',
  'child_of',
  'parent_of',
  'any',
  'not any',
]);

const NEGATIVE_OPERATORS: ReadonlySet<string> = new Set([
  '!=',
  '<>',
  'not in',
  'not like',
  'not ilike',
  'not any',
]);

/**
 * Parses a domain the way Odoo 19's `Domain()` does: items are read from the end, so the first
 * invalid item reported is the last one (`Domain() invalid item in domain: True` for a bare triple).
 */
export function parseDomain(domain: unknown): DomainNode {
  if (domain === null || domain === undefined || domain === false) return { kind: 'true' };
  if (!Array.isArray(domain)) throw pyError('ValueError', `Domain() invalid domain: ${pyRepr(domain)}`);
  const stack: DomainNode[] = [];
  const pop = (): DomainNode => {
    const node = stack.pop();
    if (!node) throw pyError('ValueError', `Domain() invalid domain: ${pyRepr(domain)}`);
    return node;
  };
  for (let index = domain.length - 1; index >= 0; index -= 1) {
    const item: unknown = domain[index];
    if (item === '!') stack.push({ kind: 'not', child: pop() });
    else if (item === '&' || item === '|') {
      const left = pop();
      const right = pop();
      stack.push({ kind: item === '&' ? 'and' : 'or', children: [left, right] });
    } else if (
      Array.isArray(item) &&
      item.length === 3 &&
      typeof item[0] === 'string' &&
      typeof item[1] === 'string'
    ) {
      stack.push({
        kind: 'condition',
        path: item[0].split('.'),
        operator: item[1].toLowerCase(),
        value: item[2],
        raw: item,
      });
    } else if (Array.isArray(item) && item.length === 3 && (item[0] === 1 || item[0] === 0)) {
      // Odoo's TRUE_LEAF (1, '=', 1) and FALSE_LEAF (0, '=', 1).
      stack.push(item[0] === 1 ? { kind: 'true' } : { kind: 'not', child: { kind: 'true' } });
    } else {
      throw pyError('ValueError', `Domain() invalid item in domain: ${pyRepr(item)}`);
    }
  }
  if (stack.length === 0) return { kind: 'true' };
  if (stack.length === 1) return pop();
  // Several top-level items are implicitly and-ed; the stack holds them reversed.
  return { kind: 'and', children: stack.reverse() };
}

function fieldOf(db: Database, model: string, name: string): FieldDef | undefined {
  return db.model(model)?.fields[name];
}

/**
 * How the ValueError of a bad domain words it: 19's `Domain` speaks of a `condition`; up to 18,
 * `odoo/osv/expression.py` speaks of a `leaf` (`Invalid field x.y in leaf (...)`, capture
 * o18-, o17- and o16-v1-err-unknown-field-domain; `Invalid leaf (...)` for an unknown operator, from its source).
 */
export type DomainWording = 'condition' | 'leaf';

/** The domain wording of an Odoo major version. */
export function domainWording(mode: string): DomainWording {
  return Number(mode) >= 19 ? 'condition' : 'leaf';
}

/** Raises Odoo's ValueError for unknown fields or operators anywhere in the domain. */
export function validateDomain(
  node: DomainNode,
  db: Database,
  model: string,
  wording: DomainWording = 'condition',
): void {
  if (node.kind === 'and' || node.kind === 'or') {
    for (const child of node.children) validateDomain(child, db, model, wording);
    return;
  }
  if (node.kind === 'not') {
    validateDomain(node.child, db, model, wording);
    return;
  }
  if (node.kind !== 'condition') return;
  const condition = pyTupleRepr(node.raw);
  if (!OPERATORS.has(node.operator)) {
    throw pyError(
      'ValueError',
      wording === 'leaf'
        ? `Invalid leaf ${condition}`
        : `Invalid operator ${pyRepr(node.raw[1])} in condition ${condition}`,
    );
  }
  // 18's expression.py rewrites `a.b` into `a any [(b, ...)]` and reports the rewritten leaf.
  const invalidField = (current: string, position: number): Error => {
    const name = node.path[position] ?? '';
    if (wording === 'condition')
      return pyError('ValueError', `Invalid field ${current}.${name} in condition ${condition}`);
    const leaf =
      position === 0
        ? condition
        : pyTupleRepr([node.path.slice(position).join('.'), node.raw[1], node.raw[2]]);
    return pyError('ValueError', `Invalid field ${current}.${name} in leaf ${leaf}`);
  };
  let current = model;
  for (const [position, name] of node.path.entries()) {
    const field = fieldOf(db, current, name);
    if (!field) throw invalidField(current, position);
    const isLast = position === node.path.length - 1;
    if (!isLast) {
      if (!field.relation) throw invalidField(current, position);
      current = field.relation;
    } else if ((node.operator === 'any' || node.operator === 'not any') && field.relation) {
      validateDomain(parseDomain(node.value), db, field.relation, wording);
    }
  }
}

/** Whether the domain has a condition on that (top-level) field, e.g. `active`. */
export function domainMentions(node: DomainNode, field: string): boolean {
  if (node.kind === 'and' || node.kind === 'or')
    return node.children.some((child) => domainMentions(child, field));
  if (node.kind === 'not') return domainMentions(node.child, field);
  return node.kind === 'condition' && node.path[0] === field;
}

/** Evaluates a parsed domain on one row. */
export function matchesDomain(node: DomainNode, db: Database, model: string, row: Row): boolean {
  switch (node.kind) {
    case 'true':
      return true;
    case 'and':
      return node.children.every((child) => matchesDomain(child, db, model, row));
    case 'or':
      return node.children.some((child) => matchesDomain(child, db, model, row));
    case 'not':
      return !matchesDomain(node.child, db, model, row);
    case 'condition':
      return matchesPath(db, model, row, node.path, node.operator, node.value);
  }
}

function matchesPath(
  db: Database,
  model: string,
  row: Row,
  path: string[],
  operator: string,
  value: unknown,
): boolean {
  const [name, ...rest] = path;
  const field = name === undefined ? undefined : fieldOf(db, model, name);
  if (!field || name === undefined) return false;
  const raw = db.fieldValue(model, row, name);
  if (rest.length > 0 && field.relation) {
    const relatedIds = relatedIdsOf(raw);
    const relation = field.relation;
    if (relatedIds.length === 0)
      return NEGATIVE_OPERATORS.has(operator) || (operator === '=' && value === false);
    return relatedIds.some((id) => {
      const related = db.row(relation, id);
      return related ? matchesPath(db, relation, related, rest, operator, value) : false;
    });
  }
  return compareField(db, field, raw, operator, value);
}

function relatedIdsOf(raw: unknown): number[] {
  if (typeof raw === 'number') return [raw];
  if (Array.isArray(raw)) return raw.filter((id): id is number => typeof id === 'number');
  return [];
}

function isEmpty(raw: unknown): boolean {
  return (
    raw === undefined ||
    raw === null ||
    raw === false ||
    raw === '' ||
    (Array.isArray(raw) && raw.length === 0)
  );
}

function coerce(field: FieldDef, value: unknown): unknown {
  if (field.type === 'boolean') return Boolean(value);
  return value;
}

function equals(db: Database, field: FieldDef, raw: unknown, value: unknown): boolean {
  if (value === false || value === null) return field.type === 'boolean' ? raw !== true : isEmpty(raw);
  if (field.type === 'one2many' || field.type === 'many2many')
    return relatedIdsOf(raw).includes(Number(value));
  if (field.type === 'many2one' && typeof value === 'string' && field.relation) {
    return typeof raw === 'number' && db.displayName(field.relation, raw) === value;
  }
  if (field.type === 'boolean') return (raw === true) === coerce(field, value);
  if (isEmpty(raw)) return false;
  return raw === value || (typeof raw === 'number' && typeof value === 'string' && String(raw) === value);
}

function likeRegex(pattern: string, caseInsensitive: boolean): RegExp {
  let source = '';
  for (let index = 0; index < pattern.length; index += 1) {
    const char = pattern.charAt(index);
    if (char === '\\' && index + 1 < pattern.length) {
      index += 1;
      source += pattern.charAt(index).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    } else if (char === '%') source += '.*';
    else if (char === '_') source += '.';
    else source += char.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, caseInsensitive ? 'is' : 's');
}

function textsOf(db: Database, field: FieldDef, raw: unknown): string[] {
  if (isEmpty(raw)) return [];
  if (field.relation) return relatedIdsOf(raw).map((id) => db.displayName(field.relation ?? '', id));
  return [String(raw)];
}

function compareOrdered(raw: unknown, operator: string, value: unknown): boolean {
  if (raw === undefined || raw === null || raw === false || value === false || value === null) return false;
  const left = typeof raw === 'number' ? raw : String(raw);
  const right = typeof raw === 'number' ? Number(value) : String(value);
  switch (operator) {
    case '>':
      return left > right;
    case '>=':
      return left >= right;
    case '<':
      return left < right;
    default:
      return left <= right;
  }
}

function hierarchy(db: Database, model: string, ids: number[], direction: 'down' | 'up'): Set<number> {
  const result = new Set<number>();
  const pending = [...ids];
  while (pending.length > 0) {
    const id = pending.pop();
    if (id === undefined || result.has(id) || !db.row(model, id)) continue;
    result.add(id);
    if (direction === 'down') {
      for (const row of db.rows(model)) if (row.parent_id === id) pending.push(Number(row.id));
    } else {
      const parent = db.row(model, id)?.parent_id;
      if (typeof parent === 'number') pending.push(parent);
    }
  }
  return result;
}

function compareField(
  db: Database,
  field: FieldDef,
  raw: unknown,
  operator: string,
  value: unknown,
): boolean {
  switch (operator) {
    case '=':
      return equals(db, field, raw, value);
    case '!=':
    case '<>':
      return !equals(db, field, raw, value);
    case 'in':
    case 'not in': {
      const list = Array.isArray(value) ? value : [value];
      const found = list.some((item) => equals(db, field, raw, item));
      return operator === 'in' ? found : !found;
    }
    case '>':
    case '>=':
    case '<':
    case '<=':
      return compareOrdered(raw, operator, value);
    case 'like':
    case 'ilike':
    case 'not like':
    case 'not ilike':
    case '=like':
    case '=ilike': {
      const pattern = value === false || value === null || value === undefined ? '' : String(value);
      const exact = operator.startsWith('=');
      const regex = likeRegex(exact ? pattern : `%${pattern}%`, operator.includes('ilike'));
      const found = textsOf(db, field, raw).some((text) => regex.test(text));
      return operator.startsWith('not') ? !found : found;
    }
    case 'child_of':
    case 'parent_of': {
      const model = field.relation;
      const rawIds = relatedIdsOf(raw);
      if (!model) return false;
      const ids = (Array.isArray(value) ? value : [value]).filter(
        (id): id is number => typeof id === 'number',
      );
      const family = hierarchy(db, model, ids, operator === 'child_of' ? 'down' : 'up');
      return rawIds.some((id) => family.has(id));
    }
    case 'any':
    case 'not any': {
      const model = field.relation;
      if (!model) return false;
      const node = parseDomain(value);
      const found = relatedIdsOf(raw).some((id) => {
        const related = db.row(model, id);
        return related ? matchesDomain(node, db, model, related) : false;
      });
      return operator === 'any' ? found : !found;
    }
    default:
      return false;
  }
}

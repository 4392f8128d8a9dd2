/**
 * @module core/mcp/tools
 * The MCP tools of `POST /mcp` (README, "Agents (MCP)"): each with a zod input schema, a one-line
 * description an agent can act on, MCP's annotations, and what it asks the ERP. The argument
 * names are the same in every tool: `model`, `domain`, `fields`, `limit`, `offset`, `order`,
 * `ids`, `values`, `method`, `args`, `kwargs`, `context`. Read tools ask for binary fields' sizes
 * (`bin_size`), not their contents, unless `context` says otherwise, and without `fields` never
 * read a binary field's content (binary-fields.ts).
 *
 * A tool declares the ERP requests its run may send (`declare`: core/mcp/tool-requests.ts) before
 * anything runs: the gate's policy step rules on them as on an execute call's request, and the run
 * sends only those (`ErpAccess.send`).
 */
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/mini';
import { lazily } from '../../platform/zod.ts';
import { majorVersion } from '../../upstream/version-client.ts';
import { IDEMPOTENCY_KEY_PATTERN } from '../idempotency.ts';
import { MAX_NAME_LENGTH, METHOD_NAME, MODEL_NAME } from '../schemas.ts';
import { fitJson, MAX_RESULT_WORDS, type ToolAnswer } from './answers.ts';
import { ErpCallError, type ErpReply, type ToolAccess } from './erp-access.ts';
import type { LookupName, ToolLookups, ToolRequest } from './tool-requests.ts';

/** The most values of a selection `fields_get`'s default answer lists (longer ones: their count). */
export const MAX_DEFAULT_SELECTION = 20;
/** The default `limit` of `search_read` (Odoo's own list views show 80). */
export const DEFAULT_SEARCH_LIMIT = 80;
/** The default `limit` of `list_models`. */
export const DEFAULT_MODELS_LIMIT = 200;
/** The largest `limit` and the most `ids` a call takes. */
export const MAX_LIMIT = 1000;
/** What `fields_get` describes of each field unless `attributes` says otherwise. */
export const DEFAULT_FIELD_ATTRIBUTES = Object.freeze([
  'string',
  'type',
  'required',
  'readonly',
  'relation',
  'selection',
]);

/*
 * The arguments' schemas are zod/mini's (the same core, checks and messages as zod's classic API,
 * and the same JSON Schemas, with less to build; core/schemas.ts does the same), and each tool
 * builds its own on its first use ({@link lazily}): a cold start that calls one tool builds that
 * tool's schema only. `tools/list` needs none of them: it answers the JSON Schemas of
 * tool-schemas.json, which a test (test/unit/mcp-protocol.test.ts) keeps equal to what the SDK
 * makes of these schemas.
 */
const model = () =>
  z
    .string()
    .check(
      z.maxLength(MAX_NAME_LENGTH),
      z.regex(MODEL_NAME, 'expected a model name such as res.partner'),
      z.describe('Technical name of the model, such as res.partner (list_models lists them).'),
    );
const domain = () =>
  z
    .array(
      z.union([
        z.enum(['&', '|', '!']),
        // [field, operator, value]; Odoo's always-true and always-false leaves use 1 and 0 as the field.
        z.tuple([z.union([z.string(), z.number()]), z.string(), z.unknown()]),
      ]),
    )
    .check(
      z.maxLength(MAX_LIMIT),
      z.describe(
        'Odoo domain: a list of conditions [field, operator, value], such as [["is_company", "=", true]], joined by "&" unless "|" or "!" come before them; [] matches every record.',
      ),
    );
const fields = (description: string) =>
  z.array(z.string().check(z.maxLength(256))).check(z.maxLength(MAX_LIMIT), z.describe(description));
const ids = (description = 'Record ids (search_read finds them).') =>
  z
    .array(z.number().check(z.int(), z.positive()))
    .check(z.minLength(1), z.maxLength(MAX_LIMIT), z.describe(description));
const context = () =>
  z
    .record(z.string(), z.unknown())
    .check(
      z.describe(
        'Odoo context, such as {"lang": "fr_FR"} or {"active_test": false} to include archived records; read tools add {"bin_size": true} (binary fields as their size) unless you set it.',
      ),
    );
const limit = (fallback: number) =>
  z
    .number()
    .check(
      z.int(),
      z.gte(1),
      z.lte(MAX_LIMIT),
      z.describe(`How many records at most (default ${fallback}).`),
    );
const offset = () =>
  z.number().check(z.int(), z.gte(0), z.describe('How many matching records to skip (for the next page).'));
const order = () =>
  z
    .string()
    .check(z.maxLength(256), z.describe('Sort order, such as "name asc" or "create_date desc, id desc".'));
const values = () =>
  z
    .record(z.string(), z.unknown())
    .check(
      z.describe(
        'Field values by field name, such as {"name": "Acme", "is_company": true} (fields_get lists the fields).',
      ),
    );

/** A tool's `outputSchema`: a JSON Schema of an object (MCP 2025-06-18 to 2026-07-28 all take it). */
export type OutputSchema = Readonly<Record<string, unknown>>;

/** `next_offset` of a page: where the next page starts, when there may be one. */
const NEXT_OFFSET = Object.freeze({
  type: 'integer',
  minimum: 0,
  description: 'The offset of the next page, when more may match; absent on the last page.',
});

/** What the paging and listing tools answer: a list under `key`, and where the next page starts. */
function listOutput(
  key: string,
  items: Readonly<Record<string, unknown>>,
  description: string,
): OutputSchema {
  return Object.freeze({
    type: 'object',
    properties: { [key]: { type: 'array', items, description }, next_offset: NEXT_OFFSET },
    required: [key],
  });
}

const RECORDS_OUTPUT = listOutput(
  'records',
  { type: 'object', properties: { id: { type: 'integer' } } },
  'The records, each with its id and the fields asked for (the same JSON as the text).',
);

const READ_OUTPUT: OutputSchema = Object.freeze({
  type: 'object',
  properties: {
    records: (RECORDS_OUTPUT.properties as Record<string, unknown>).records,
    unread_ids: {
      type: 'array',
      items: { type: 'integer' },
      description: 'The ids asked for whose records did not fit: read them in another call.',
    },
  },
  required: ['records'],
});

const COUNT_OUTPUT: OutputSchema = Object.freeze({
  type: 'object',
  properties: { count: { type: 'integer', minimum: 0, description: 'How many records match.' } },
  required: ['count'],
});

const FIELDS_OUTPUT: OutputSchema = Object.freeze({
  type: 'object',
  properties: {
    fields: {
      type: 'object',
      additionalProperties: { type: 'object' },
      description: 'Each field by name, with the attributes asked for (the same JSON as the text).',
    },
  },
  required: ['fields'],
});

const MODELS_OUTPUT = listOutput(
  'models',
  { type: 'object', properties: { model: { type: 'string' }, name: { type: 'string' } } },
  'The models: technical name (model) and label (name).',
);

const VERSION_OUTPUT: OutputSchema = Object.freeze({
  type: 'object',
  properties: {
    version: { type: 'string', description: 'The version as the ERP names it, such as "19.0".' },
    version_info: {
      type: 'array',
      description: 'The version as a list: major, minor, micro, level, serial, edition.',
    },
    protocol: { type: 'string', description: 'How the proxy reaches this ERP.' },
  },
  required: ['version', 'version_info'],
});

/** The shape of a tool's arguments: zod/mini schemas by argument name. */
type Shape = Record<string, z.ZodMiniType>;

/**
 * One tool, declared once (docs/design.md, "The usual changes": an MCP tool): its name, schema,
 * description, annotations, whether it writes, the ERP requests it may send and what it does with
 * them. Everything else is derived from it: `tools/list` (with tool-schemas.json, generated from `input`), the write gate
 * (`MCP_WRITE_TOOLS`: {@link offeredTools}), the key policy's read-only rule and the OAuth scope
 * check (both from `writes`), the `tool` log field and metric dimension ({@link McpToolName}).
 */
export interface ToolDefinition<S extends Shape = Shape, N extends string = string> {
  readonly name: N;
  readonly title: string;
  readonly description: string;
  /** The schema of its arguments, built on its first use and kept. */
  readonly input: () => z.ZodMiniObject<S>;
  readonly annotations: ToolAnnotations;
  /** The JSON Schema of its `structuredContent`, for the tools that read (each answer fits it). */
  readonly outputSchema?: OutputSchema;
  /** Changes ERP data: listed only with `MCP_WRITE_TOOLS=true`, refused to a read key and to a token without `erp.write`. */
  readonly writes: boolean;
  /** What of the request's ERP connection it needs: `url` (the database when given), or all of it (unset). */
  readonly needs?: 'url';
  /**
   * The method every request of it is sent with, when it has one (`call_method`: its `method`
   * argument): asked with the tool's question, before any lookup of its declaration.
   */
  readonly method?: string;
  /** The proxy's lookups its declaration reads (core/mcp/tool-requests.ts); none unless named. */
  readonly lookups: readonly LookupName[];
  /**
   * The ERP requests its run may send, from its checked arguments and its lookups: what the
   * gate's policy step rules on (a conditional one, such as aggregate's read_group after a 404,
   * may not be sent). Built on the request's connection by `ErpAccess`.
   */
  declare(
    args: z.output<z.ZodMiniObject<S>>,
    lookups: ToolLookups,
  ): readonly ToolRequest[] | Promise<readonly ToolRequest[]>;
  /** Sends its declared `requests` (`erp.send`: only those) and makes the answer. */
  run(
    args: z.output<z.ZodMiniObject<S>>,
    erp: ToolAccess,
    requests: readonly ToolRequest[],
  ): Promise<ToolAnswer>;
}

/**
 * A tool from its declaration (`input`: what builds its arguments' shape); its annotations from its
 * title and whether it writes (`changes`: how), so `writes` and the annotations cannot disagree.
 * Every tool reaches an ERP, a world outside the proxy (`openWorldHint`).
 */
function tool<const N extends string, S extends Shape>(
  definition: Omit<ToolDefinition<S, N>, 'annotations' | 'writes' | 'input' | 'lookups'> & {
    readonly input: () => S;
    readonly lookups?: readonly LookupName[];
    readonly changes?: { readonly destructive: boolean; readonly idempotent: boolean };
  },
): ToolDefinition<Shape, N> {
  const { changes, input, lookups = [], ...rest } = definition;
  // Every tool that writes takes an optional idempotency_key (README, "Retrying writes safely").
  const shape =
    changes === undefined ? input : () => ({ ...input(), idempotency_key: idempotencyKeyArgument() });
  const annotations: ToolAnnotations = {
    title: definition.title,
    readOnlyHint: changes === undefined,
    destructiveHint: changes?.destructive ?? false,
    idempotentHint: changes?.idempotent ?? true,
    openWorldHint: true,
  };
  return {
    ...rest,
    input: lazily(() => z.strictObject(shape())),
    lookups,
    annotations,
    writes: changes !== undefined,
  } as unknown as ToolDefinition<Shape, N>;
}

/**
 * The optional `idempotency_key` of a tool that writes: the rules of the `Idempotency-Key` header,
 * and words that tell a model to reuse it when it retries the same operation.
 */
function idempotencyKeyArgument() {
  return z.optional(
    z
      .string()
      .check(
        z.regex(IDEMPOTENCY_KEY_PATTERN, 'expected 1 to 255 visible ASCII characters (no spaces)'),
        z.describe(
          'Optional, recommended: a unique key for this one change (e.g. a fresh UUID). If the call fails or its answer is lost and you retry the SAME change, send the SAME key: the proxy runs it at most once and answers the retry with the first result. Use a new key for every new change.',
        ),
      ),
  );
}

/** `context` with the read tools' default: binary fields as their size, not their contents. */
function readContext(given: Record<string, unknown> | undefined): Record<string, unknown> {
  return { bin_size: true, ...given };
}

/** Named arguments without the ones not given. */
function present(kwargs: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(kwargs).filter(([, value]) => value !== undefined));
}

const LIMIT_WORDS = MAX_RESULT_WORDS;

/**
 * The structured form of a result whose text is `json`: that same JSON under `key` (parsed back,
 * so a result cut to size is cut alike), with `extra` members.
 */
function structuredAs(
  key: string,
  json: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { [key]: JSON.parse(json) as unknown, ...extra };
}

/**
 * A page of records (`search_read`, `list_models`, `aggregate`), with how to get the next one;
 * its structured form under `key` with `next_offset`.
 */
function page(
  toolName: string,
  { value: records, facts }: ErpReply,
  at: number,
  pageLimit: number,
  key = 'records',
): ToolAnswer {
  const fitted = fitJson(records);
  const items = key === 'records' ? 'records' : key;
  if (fitted.kept !== undefined) {
    return {
      json: fitted.json,
      note:
        `Only the first ${fitted.kept} of the ${fitted.total} ${items} the ERP returned fit in ${LIMIT_WORDS}. ` +
        `Call ${toolName} again with offset=${at + fitted.kept} for the next ones, or ask for fewer fields.`,
      structured: structuredAs(key, fitted.json, { next_offset: at + fitted.kept }),
      facts,
    };
  }
  if (fitted.total === pageLimit) {
    return {
      json: fitted.json,
      note:
        `${fitted.total} ${items}, the limit: more may match. Call ${toolName} again with offset=${at + pageLimit} ` +
        `for the next ones${toolName === 'search_read' ? ' (search_count gives the total)' : ''}.`,
      structured: structuredAs(key, fitted.json, { next_offset: at + pageLimit }),
      facts,
    };
  }
  return { json: fitted.json, structured: structuredAs(key, fitted.json), facts };
}

/** Any other result, cut to size by whole items when too large. */
function whole({ value: result, facts }: ErpReply, what = 'items'): ToolAnswer {
  const fitted = fitJson(result);
  if (fitted.kept === undefined) return { json: fitted.json, facts };
  return {
    json: fitted.json,
    facts,
    note:
      typeof result === 'string'
        ? `The result is a text of ${fitted.total} characters; only the first ${fitted.kept} fit in ${LIMIT_WORDS}.`
        : `Only the first ${fitted.kept} of the ${fitted.total} ${what} fit in ${LIMIT_WORDS}; ask for less.`,
  };
}

const searchRead = tool({
  name: 'search_read',
  title: 'Search and read records',
  description:
    'Find records of a model matching a domain and read their fields: name the fields you need, page with limit (default 80) and offset.',
  input: () => ({
    model: model(),
    domain: z.optional(domain()),
    fields: z.optional(
      fields('Field names to read, such as ["name", "email"] (all fields if omitted: large).'),
    ),
    limit: z.optional(limit(DEFAULT_SEARCH_LIMIT)),
    offset: z.optional(offset()),
    order: z.optional(order()),
    context: z.optional(context()),
  }),
  outputSchema: RECORDS_OUTPUT,
  method: 'search_read',
  lookups: ['fieldsToRead'],
  async declare(args, lookups) {
    return [
      {
        model: args.model,
        method: 'search_read',
        kwargs: present({
          domain: args.domain ?? [],
          fields: await lookups.fieldsToRead(args.model, args.fields),
          limit: args.limit ?? DEFAULT_SEARCH_LIMIT,
          offset: args.offset ?? 0,
          order: args.order,
          context: readContext(args.context),
        }),
      },
    ];
  },
  async run(args, erp, [request]) {
    const records = await erp.send(request);
    return page('search_read', records, args.offset ?? 0, args.limit ?? DEFAULT_SEARCH_LIMIT);
  },
});

const read = tool({
  name: 'read',
  title: 'Read records',
  description: 'Read fields of records of a model by their ids.',
  input: () => ({
    model: model(),
    ids: ids(),
    fields: z.optional(fields('Field names to read (all fields if omitted: large).')),
    context: z.optional(context()),
  }),
  outputSchema: READ_OUTPUT,
  method: 'read',
  lookups: ['fieldsToRead'],
  async declare(args, lookups) {
    return [
      {
        model: args.model,
        method: 'read',
        kwargs: present({
          ids: args.ids,
          fields: await lookups.fieldsToRead(args.model, args.fields),
          context: readContext(args.context),
        }),
      },
    ];
  },
  async run(args, erp, [request]) {
    const { value: records, facts } = await erp.send(request);
    const fitted = fitJson(records);
    if (fitted.kept === undefined)
      return { json: fitted.json, structured: structuredAs('records', fitted.json), facts };
    const shown = new Set(
      (JSON.parse(fitted.json) as unknown[]).map((record) => (record as { id?: unknown } | null)?.id),
    );
    const rest = args.ids.filter((id) => !shown.has(id));
    return {
      json: fitted.json,
      note:
        `Only ${fitted.kept} of the ${fitted.total} records fit in ${LIMIT_WORDS}. Read the others in another call ` +
        `(ids ${JSON.stringify(rest.slice(0, 100))}${rest.length > 100 ? ` and ${rest.length - 100} more` : ''}), or ask for fewer fields.`,
      structured: structuredAs('records', fitted.json, { unread_ids: rest }),
      facts,
    };
  },
});

const searchCount = tool({
  name: 'search_count',
  title: 'Count records',
  description: 'Count the records of a model that match a domain.',
  input: () => ({ model: model(), domain: z.optional(domain()), context: z.optional(context()) }),
  outputSchema: COUNT_OUTPUT,
  method: 'search_count',
  declare: (args) => [
    {
      model: args.model,
      method: 'search_count',
      kwargs: present({ domain: args.domain ?? [], context: args.context }),
    },
  ],
  async run(_args, erp, [request]) {
    const count = await erp.send(request);
    return { ...whole(count), structured: { count: count.value } };
  },
});

/** The aggregations `aggregate` offers on numeric fields (and `count_distinct` on any). */
export const AGGREGATIONS = Object.freeze(['sum', 'avg', 'min', 'max', 'count_distinct'] as const);
/** The most fields `aggregate` groups by. */
export const MAX_GROUP_BY = 4;
/** The most aggregations one `aggregate` call asks for. */
export const MAX_AGGREGATES = 20;

const GROUP_BY_SPEC = /^[A-Za-z_][A-Za-z0-9_]*(?::(?:day|week|month|quarter|year))?$/;
const AGGREGATE_SPEC = new RegExp(`^[A-Za-z_][A-Za-z0-9_]*:(?:${AGGREGATIONS.join('|')})$`);
const GROUP_ORDER_TERM = /^\s*([A-Za-z_][A-Za-z0-9_]*(?::[a-z_]+)?)(?:\s+(asc|desc))?\s*$/i;

const GROUPS_OUTPUT = listOutput(
  'groups',
  { type: 'object', properties: { count: { type: 'integer', minimum: 0 } }, required: ['count'] },
  'One object per group: each group_by field with its value (a many2one as [id, name], false when empty), count (its records) and each aggregate as "field:aggregation".',
);

/** One group as `aggregate` answers it, from the ERP's row: the group values, `count`, the aggregates. */
function groupRow(
  row: unknown,
  groupBy: readonly string[],
  aggregates: readonly string[],
  keyOf: (aggregate: string, index: number) => string,
): Record<string, unknown> {
  const source = (row ?? {}) as Record<string, unknown>;
  const group: Record<string, unknown> = {};
  for (const spec of groupBy) group[spec] = source[spec] ?? false;
  group.count = source.__count ?? 0;
  aggregates.forEach((aggregate, index) => {
    group[aggregate] = source[keyOf(aggregate, index)] ?? null;
  });
  return group;
}

/** The terms of `order` that name `count` (the groups' record counts). */
function ordersByCount(order: string | undefined): boolean {
  return (order ?? '').split(',').some((term) => GROUP_ORDER_TERM.exec(term)?.[1] === 'count');
}

/**
 * `order` in the ERP's words: `count` as `countKey` (formatted_read_group's `__count`; read_group
 * orders by an aggregate of its own, as ERP 16 cannot order by `__count`), an aggregate
 * `field:agg` as `name(aggregate)` says.
 */
function groupOrder(
  order: string | undefined,
  aggregates: readonly string[],
  name: (aggregate: string, index: number) => string,
  countKey: string,
): string | undefined {
  if (order === undefined) return undefined;
  return order
    .split(',')
    .map((term) => {
      const match = GROUP_ORDER_TERM.exec(term);
      if (match === null) return term.trim();
      const [, key = '', direction] = match;
      const index = aggregates.indexOf(key);
      const erpKey = key === 'count' ? countKey : index >= 0 ? name(key, index) : key;
      return direction === undefined ? erpKey : `${erpKey} ${direction.toLowerCase()}`;
    })
    .join(', ');
}

/** The read_group aggregate a `count` order sorts by: the records of each group (ERP 16 has no `__count` order). */
const RECORD_COUNT = 'record_count';

/** The read_group alias of the `index`th aggregate (`field:agg` is not a name read_group takes). */
const readGroupAlias = (_aggregate: string, index: number): string => `aggregate_${index}`;

/** `aggregate` on ERP 16-18 (and 19+ without formatted_read_group): `read_group`, not lazy. */
function readGroup(args: AggregateArgs): ToolRequest {
  const fields = args.aggregates.map((spec, index) => {
    const [field = '', func = ''] = spec.split(':');
    return `${readGroupAlias(spec, index)}:${func}(${field})`;
  });
  if (ordersByCount(args.order)) fields.push(`${RECORD_COUNT}:count(id)`);
  return {
    model: args.model,
    method: 'read_group',
    kwargs: present({
      domain: args.domain,
      fields,
      groupby: [...args.groupBy],
      offset: args.at,
      limit: args.pageLimit,
      orderby: groupOrder(args.order, args.aggregates, readGroupAlias, RECORD_COUNT),
      lazy: false,
      context: readContext(args.context),
    }),
  };
}

/** The same aggregate name: formatted_read_group's aggregates are named `field:agg` already. */
const sameAggregate = (aggregate: string): string => aggregate;

/** `aggregate` on ERP 19+: `formatted_read_group`. */
function formattedReadGroup(args: AggregateArgs): ToolRequest {
  return {
    model: args.model,
    method: 'formatted_read_group',
    kwargs: present({
      domain: args.domain,
      groupby: [...args.groupBy],
      aggregates: ['__count', ...args.aggregates],
      offset: args.at,
      limit: args.pageLimit,
      order: groupOrder(args.order, args.aggregates, sameAggregate, '__count'),
      context: readContext(args.context),
    }),
  };
}

/** The groups of a `read_group` or `formatted_read_group` answer, as `aggregate` answers them. */
function groupsOf(
  args: AggregateArgs,
  sent: ToolRequest,
  reply: ErpReply,
): ErpReply<Record<string, unknown>[]> {
  const keyOf = sent.method === 'read_group' ? readGroupAlias : sameAggregate;
  const rows = Array.isArray(reply.value) ? reply.value : [];
  return {
    value: rows.map((row) => groupRow(row, args.groupBy, args.aggregates, keyOf)),
    facts: reply.facts,
  };
}

interface AggregateArgs {
  readonly model: string;
  readonly at: number;
  readonly pageLimit: number;
  readonly domain: readonly unknown[];
  readonly groupBy: readonly string[];
  readonly aggregates: readonly string[];
  readonly order: string | undefined;
  readonly context: Record<string, unknown> | undefined;
}

/** What `aggregate`'s requests are built from. */
function aggregateArgs(args: {
  readonly model: string;
  readonly domain?: readonly unknown[] | undefined;
  readonly group_by: readonly string[];
  readonly aggregates?: readonly string[] | undefined;
  readonly order?: string | undefined;
  readonly limit?: number | undefined;
  readonly offset?: number | undefined;
  readonly context?: Record<string, unknown> | undefined;
}): AggregateArgs {
  return {
    model: args.model,
    at: args.offset ?? 0,
    pageLimit: args.limit ?? DEFAULT_SEARCH_LIMIT,
    domain: args.domain ?? [],
    groupBy: args.group_by,
    aggregates: args.aggregates ?? [],
    order: args.order,
    context: args.context,
  };
}

const aggregate = tool({
  name: 'aggregate',
  title: 'Count and total by group',
  description:
    'Group the records of a model matching a domain by fields and count them, with sums, averages, minimums or maximums of numeric fields per group; page with limit (default 80) and offset.',
  input: () => ({
    model: model(),
    domain: z.optional(domain()),
    group_by: z
      .array(
        z
          .string()
          .check(
            z.regex(
              GROUP_BY_SPEC,
              'expected a field name, or a date field with :day, :week, :month, :quarter or :year',
            ),
          ),
      )
      .check(
        z.maxLength(MAX_GROUP_BY),
        z.describe(
          `Fields to group by (at most ${MAX_GROUP_BY}), such as ["country_id"] or ["date_order:month", "state"]; [] for one group of every matching record.`,
        ),
      ),
    aggregates: z.optional(
      z
        .array(
          z
            .string()
            .check(
              z.regex(AGGREGATE_SPEC, `expected "field:aggregation" with one of ${AGGREGATIONS.join(', ')}`),
            ),
        )
        .check(
          z.maxLength(MAX_AGGREGATES),
          z.describe(
            `What to compute per group besides its count, as "field:aggregation" (${AGGREGATIONS.join(', ')}), such as ["amount_total:sum", "amount_total:avg"].`,
          ),
        ),
    ),
    order: z.optional(
      z
        .string()
        .check(
          z.maxLength(256),
          z.describe(
            'Order of the groups, by a group_by field, count or an aggregate, such as "count desc" or "amount_total:sum desc".',
          ),
        ),
    ),
    limit: z.optional(limit(DEFAULT_SEARCH_LIMIT)),
    offset: z.optional(offset()),
    context: z.optional(context()),
  }),
  outputSchema: GROUPS_OUTPUT,
  lookups: ['version'],
  async declare(args, lookups) {
    const request = aggregateArgs(args);
    const major = majorVersion(await lookups.version());
    if (major === undefined || major < 19) return [readGroup(request)];
    // A 19.0 build without formatted_read_group: read_group, still there (deprecated), after a 404.
    // From 20 on read_group has another form (odoo/odoo#236332): formatted_read_group's error stands.
    return major >= 20
      ? [formattedReadGroup(request)]
      : [formattedReadGroup(request), { ...readGroup(request), conditional: true }];
  },
  async run(args, erp, [first, fallback]) {
    const request = aggregateArgs(args);
    let sent = first;
    let reply: ErpReply;
    try {
      reply = await erp.send(first);
    } catch (error) {
      if (fallback === undefined || !(error instanceof ErpCallError) || error.code !== 404) throw error;
      sent = fallback;
      reply = await erp.send(fallback);
    }
    const groups = groupsOf(request, sent as ToolRequest, reply);
    return page('aggregate', groups, request.at, request.pageLimit, 'groups');
  },
});

const fieldsGet = tool({
  name: 'fields_get',
  title: 'Describe fields',
  description:
    "Describe a model's fields (label, type, relation, required...) to learn what search_read, create and write take.",
  input: () => ({
    model: model(),
    fields: z.optional(fields('Only these fields (all if omitted).')),
    attributes: z.optional(
      z
        .array(z.string().check(z.maxLength(64)))
        .check(
          z.maxLength(64),
          z.describe(
            `What to tell of each field. Default: ${DEFAULT_FIELD_ATTRIBUTES.join(', ')}, without the ones that are false or empty, and a selection of more than ${MAX_DEFAULT_SELECTION} values as its selection_count; name attributes (such as ["selection"] or ["help"]) for the ERP's full answer.`,
          ),
        ),
    ),
    context: z.optional(context()),
  }),
  outputSchema: FIELDS_OUTPUT,
  method: 'fields_get',
  declare: (args) => [
    {
      model: args.model,
      method: 'fields_get',
      kwargs: present({
        allfields: args.fields,
        attributes: args.attributes ?? [...DEFAULT_FIELD_ATTRIBUTES],
        context: args.context,
      }),
    },
  ],
  async run(args, erp, [request]) {
    const { value: answered, facts } = await erp.send(request);
    const compacted =
      args.attributes === undefined ? compactFields(answered) : { description: answered, cut: [] };
    const fitted = fitJson(compacted.description);
    const notes: string[] = [];
    if (fitted.kept !== undefined) {
      notes.push(
        `Only ${fitted.kept} of the ${fitted.total} fields fit in ${LIMIT_WORDS}. Name the fields you need ` +
          '(fields) or ask for fewer attributes.',
      );
    }
    if (compacted.cut.length > 0) {
      const named = compacted.cut.slice(0, 10);
      notes.push(
        `The selection${named.length > 1 ? 's' : ''} of ${named.join(', ')}${compacted.cut.length > 10 ? ' and others' : ''} ` +
          `${named.length > 1 ? 'have' : 'has'} more than ${MAX_DEFAULT_SELECTION} values (selection_count says how many): ` +
          `call fields_get with fields: ${JSON.stringify(named.slice(0, 1))} and attributes: ["selection"] for the values.`,
      );
    }
    const structured = structuredAs('fields', fitted.json);
    return notes.length === 0
      ? { json: fitted.json, structured, facts }
      : { json: fitted.json, note: notes.join(' '), structured, facts };
  },
});

/**
 * `fields_get`'s default answer, made for a model: each field without its false or empty
 * attributes (`required: false`, `readonly: false`, no relation), and a selection of more than
 * {@link MAX_DEFAULT_SELECTION} values (time zones, languages) as `selection_count`. On
 * res.partner of Odoo 19: 28 899 characters to about 5 300. `cut`: the fields whose selection was
 * left out.
 */
export function compactFields(description: unknown): {
  readonly description: unknown;
  readonly cut: string[];
} {
  if (description === null || typeof description !== 'object' || Array.isArray(description)) {
    return { description, cut: [] };
  }
  const cut: string[] = [];
  const compacted: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(description)) {
    if (field === null || typeof field !== 'object' || Array.isArray(field)) {
      compacted[name] = field;
      continue;
    }
    const attributes: Record<string, unknown> = {};
    for (const [attribute, value] of Object.entries(field)) {
      if (value === false || value === null || (Array.isArray(value) && value.length === 0)) continue;
      if (attribute === 'selection' && Array.isArray(value) && value.length > MAX_DEFAULT_SELECTION) {
        attributes.selection_count = value.length;
        cut.push(name);
        continue;
      }
      attributes[attribute] = value;
    }
    compacted[name] = attributes;
  }
  return { description: compacted, cut };
}

const listModels = tool({
  name: 'list_models',
  title: 'List models',
  description:
    "List the ERP's models (technical name and label), optionally those whose name or label contains a word.",
  input: () => ({
    search: z.optional(
      z
        .string()
        .check(
          z.maxLength(256),
          z.describe('Only models whose technical name or label contains this, such as "partner".'),
        ),
    ),
    limit: z.optional(limit(DEFAULT_MODELS_LIMIT)),
    offset: z.optional(offset()),
  }),
  outputSchema: MODELS_OUTPUT,
  declare(args) {
    const word = args.search?.trim();
    return [
      {
        model: 'ir.model',
        method: 'search_read',
        kwargs: {
          domain: [
            ['transient', '=', false],
            ...(word ? ['|', ['model', 'ilike', word], ['name', 'ilike', word]] : []),
          ],
          fields: ['model', 'name'],
          order: 'model',
          limit: args.limit ?? DEFAULT_MODELS_LIMIT,
          offset: args.offset ?? 0,
        },
        catalogue: true,
      },
    ];
  },
  async run(args, erp, [request]) {
    const pageLimit = args.limit ?? DEFAULT_MODELS_LIMIT;
    const at = args.offset ?? 0;
    const { value: records, facts } = await erp.send(request);
    const models = Array.isArray(records)
      ? records.map((record) => ({
          model: (record as { model?: unknown }).model,
          name: (record as { name?: unknown }).name,
        }))
      : records;
    return page('list_models', { value: models, facts }, at, pageLimit, 'models');
  },
});

const erpVersion = tool({
  name: 'erp_version',
  title: 'ERP version',
  description: "The ERP's version, and which protocol the proxy uses to reach it.",
  input: () => ({}),
  outputSchema: VERSION_OUTPUT,
  needs: 'url',
  lookups: ['version'],
  async declare(_args, lookups) {
    // The version is the proxy's lookup, read at the policy step; the run answers it.
    await lookups.version();
    return [];
  },
  async run(_args, erp) {
    const { value: version, facts } = erp.lookedUpVersion();
    const major = majorVersion(version);
    const protocol =
      major === undefined
        ? undefined
        : major >= 19
          ? 'JSON-2 (/json/2/<model>/<method>)'
          : '/jsonrpc execute_kw (needs the x-erp-user-id header)';
    const answer = { ...version, ...(protocol ? { protocol } : {}) };
    return { ...whole({ value: answer, facts }), structured: answer };
  },
});

const create = tool({
  name: 'create',
  title: 'Create a record',
  description: 'Create one record of a model from its field values; answers the new id.',
  input: () => ({ model: model(), values: values(), context: z.optional(context()) }),
  changes: { destructive: false, idempotent: false },
  method: 'create',
  declare: (args) => [
    {
      model: args.model,
      method: 'create',
      kwargs: present({ vals_list: [args.values], context: args.context }),
    },
  ],
  async run(_args, erp, [request]) {
    const { value: created, facts } = await erp.send(request);
    // JSON-2 answers a list of ids; one record was created.
    return whole({ value: Array.isArray(created) && created.length === 1 ? created[0] : created, facts });
  },
});

const write = tool({
  name: 'write',
  title: 'Update records',
  description: 'Set field values on records of a model by their ids.',
  input: () => ({ model: model(), ids: ids(), values: values(), context: z.optional(context()) }),
  changes: { destructive: true, idempotent: true },
  method: 'write',
  declare: (args) => [
    {
      model: args.model,
      method: 'write',
      kwargs: present({ ids: args.ids, vals: args.values, context: args.context }),
    },
  ],
  run: async (_args, erp, [request]) => whole(await erp.send(request)),
});

const unlink = tool({
  name: 'unlink',
  title: 'Delete records',
  description: 'Delete records of a model by their ids.',
  input: () => ({ model: model(), ids: ids(), context: z.optional(context()) }),
  changes: { destructive: true, idempotent: true },
  method: 'unlink',
  declare: (args) => [
    { model: args.model, method: 'unlink', kwargs: present({ ids: args.ids, context: args.context }) },
  ],
  run: async (_args, erp, [request]) => whole(await erp.send(request)),
});

const callMethod = tool({
  name: 'call_method',
  title: 'Call a model method',
  description:
    'Call any public method of a model (such as action_archive or name_search): ids for record methods, arguments in kwargs by name or in args by position.',
  input: () => ({
    model: model(),
    method: z
      .string()
      .check(
        z.maxLength(MAX_NAME_LENGTH),
        z.regex(METHOD_NAME, 'expected a method name (letters, digits and _)'),
        z.describe('The method, such as name_search or action_archive (names starting with _ are private).'),
      ),
    ids: z.optional(ids('Record ids, for a method that works on records (leave out for model methods).')),
    args: z.optional(
      z.array(z.unknown()).check(z.maxLength(MAX_LIMIT), z.describe('Positional arguments, after the ids.')),
    ),
    kwargs: z.optional(
      z
        .record(z.string(), z.unknown())
        .check(
          z.describe(
            'Named arguments, by the method\'s own parameter names, such as {"name": "Azure", "limit": 5}.',
          ),
        ),
    ),
    context: z.optional(context()),
  }),
  changes: { destructive: true, idempotent: false },
  declare(args) {
    const named = present({ ...args.kwargs, context: args.context ?? args.kwargs?.context });
    if (args.args !== undefined && args.args.length > 0) {
      // Positional: a record method's ids are its first argument.
      const positional = args.ids === undefined ? args.args : [args.ids, ...args.args];
      return [{ model: args.model, method: args.method, args: positional, kwargs: named }];
    }
    return [{ model: args.model, method: args.method, kwargs: present({ ...named, ids: args.ids }) }];
  },
  run: async (_args, erp, [request]) => whole(await erp.send(request)),
});

/** Every tool, in the order `tools/list` gives them. */
export const TOOLS = Object.freeze([
  searchRead,
  read,
  searchCount,
  aggregate,
  fieldsGet,
  listModels,
  erpVersion,
  create,
  write,
  unlink,
  callMethod,
] as const);

/** A declared tool. */
export type McpTool = (typeof TOOLS)[number];
/** A tool's name: the `tool` field of the request log and the `tool` dimension of `McpToolCalls`. */
export type McpToolName = McpTool['name'];

/** The tools a deployment offers: the read tools, and the write tools when `MCP_WRITE_TOOLS` is on. */
export function offeredTools(writeTools: boolean): readonly McpTool[] {
  return TOOLS.filter((definition) => writeTools || !definition.writes);
}

/** The declared tool of this name, offered or not. */
export function declaredTool(name: string): McpTool | undefined {
  return TOOLS.find((definition) => definition.name === name);
}

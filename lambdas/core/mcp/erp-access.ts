/**
 * @module core/mcp/erp-access
 * How an MCP tool reaches the ERP of its request: the connection (the `x-erp-*` headers, checked,
 * or the caller's identity-map entry), the target policy as for execute, then the proxy's own
 * transports, so every ERP version is served the way execute serves it (README, "One envelope
 * for every ERP version"):
 *
 * - named arguments (JSON-2's form, every tool): JSON-2 on ERP 19 and later, `/jsonrpc`
 *   execute_kw on ERP 16-18 (the v2 transport in `auto` mode, whatever `ERP_V2_TRANSPORT` says);
 * - positional arguments (`call_method` with `args`): execute_kw on ERP 16-18, JSON-2 on 19 and
 *   later with the names read from the ERP's method documentation (the v1 transport in `json2`
 *   mode, whatever `ERP_V1_TRANSPORT` says).
 *
 * ERP errors come back with the code JSON-2 gives them on every version (401, 403, 404, 409, 422,
 * 500) and its exception name; proxy errors are thrown as they are.
 *
 * Each call returns its answer with what the request log learns of it ({@link ErpReply}: the
 * target, the database, the model and method as sent); what it throws carries the same facts
 * (`withFacts`), so a refused or failed call's log line names them too. Nothing is kept for later.
 */

import type { Config } from '../../platform/config.ts';
import {
  BadUpstreamResponseError,
  InternalError,
  InvalidRequestError,
  Json2UnavailableError,
  KeyPolicyRefusedError,
  TargetRefusedError,
} from '../../platform/errors.ts';
import { isJsonObject } from '../../platform/json.ts';
import { isReadMethod, modelListDomain, modelListed } from '../../platform/key-policy.ts';
import type { ErpVersion } from '../../upstream/erp-answer.ts';
import type { CallContext, ErpCall, ErpOutcome, ErpTransport } from '../../upstream/erp-transport.ts';
import { type CompiledTargetPolicy, checkTarget } from '../../upstream/target-policy.ts';
import { json2FailureOf } from '../../upstream/v2-over-jsonrpc.ts';
import { majorVersion, type VersionClient } from '../../upstream/version-client.ts';
import type { ConfirmDeps } from '../confirm/decide.ts';
import type { IdempotencyDeps } from '../idempotency.ts';
import { checkKeyPolicy } from '../key-policy-check.ts';
import { type LimitsDeps, refusedBeforeErp } from '../limits-check.ts';
import { applyContentRules, hasContentRules, type RuledCall } from '../policy/call-rules.ts';
import { callWrites } from '../policy/call-writes.ts';
import { erpFieldsOf } from '../policy/erp-fields.ts';
import { deniedFieldsOf, type FieldTest } from '../policy/field-rule.ts';
import { learnedBefore, type RequestFacts, withFacts } from '../request-facts.ts';
import {
  type ErpConnection,
  erpConnection,
  erpDatabase,
  erpUrl,
  type McpErp,
  type McpInbound,
} from './connection.ts';

/** What the request log learns of a tool's ERP call: the target, the database, the model and method as sent. */
export type ErpFacts = Pick<RequestFacts, 'erpHost' | 'erpDb' | 'model' | 'action'>;

/** An ERP call's answer, with what was learned on the way to it. */
export interface ErpReply<T = unknown> {
  readonly value: T;
  readonly facts: ErpFacts;
}

/** What the MCP tools need of the runtime. */
export interface McpDeps {
  readonly config: Config;
  readonly policy: CompiledTargetPolicy;
  readonly versions: VersionClient;
  /** Named arguments: JSON-2 on ERP 19+, execute_kw on 16-18 (a `V2Router` in `auto` mode). */
  readonly named: ErpTransport;
  /** Positional arguments too: execute_kw on 16-18, JSON-2 on 19+ (a `V1Router` in `json2` mode). */
  readonly positional: ErpTransport;
  /** Offer the tools that change data (`MCP_WRITE_TOOLS`). */
  readonly writeTools: boolean;
  /** The store of the write tools' `idempotency_key` (core/idempotency.ts). */
  readonly idempotency: IdempotencyDeps;
  /** The proxy's limits (README, "Limits"): the store and `ERP_TARGET_LIMITS`; absent: none checked. */
  readonly limits?: LimitsDeps;
  /** A person's confirmations (docs/guide/confirmations.md): the seal keys, the store, `CONFIRM_TTL`; absent: a key generated at start and the idempotency store. */
  readonly confirm?: ConfirmDeps;
}

/** An ERP error, with the code JSON-2 gives it (README, "Responses and errors"). */
export class ErpCallError extends Error {
  /** The ERP's version, when a 401 made the access ask it (keys have scopes from 19.4: key-scope.ts). */
  erpVersion: ErpVersion | undefined;

  constructor(
    readonly code: number,
    readonly erpMessage: string,
    readonly data: unknown,
  ) {
    super(erpMessage);
    this.name = 'ErpCallError';
  }
}

/** The first ERP version with JSON-2: below it, calls need the user's id. */
const FIRST_JSON2_MAJOR = 19;

function missingUserId(major: number, erp: McpErp): InvalidRequestError {
  const why = `This ERP runs version ${major}, older than 19: the proxy reaches it over /jsonrpc execute_kw, which needs the id of `;
  return new InvalidRequestError(
    erp.from === 'headers'
      ? `${why}the user whose key is in x-erp-api-key. Add the x-erp-user-id header (that user's id, an integer) to the MCP ` +
          "client's configuration."
      : `${why}the ERP user. The operator's identity map entry ${JSON.stringify(erp.identity)} has no erp.user_id: ask an operator ` +
          'of this erp-proxy to add it (the id of the ERP user whose key it holds).',
  );
}

/** The value of an ERP answer (a raw answer was validated as JSON by the transport). */
function answerValue(outcome: ErpOutcome): unknown {
  if (outcome.kind === 'result') return outcome.value;
  if (outcome.kind === 'raw_result') return JSON.parse(outcome.json.toString('utf8'));
  throw new ErpCallError(outcome.code, outcome.message, outcome.data);
}

/** A refusal by the key's or the proxy's policy (-32008), as opposed to a failure on the way. */
function isPolicyRefusal(error: unknown): boolean {
  return error instanceof KeyPolicyRefusedError || error instanceof TargetRefusedError;
}

/** The ERP calls of one tool call, within one time budget (`context`). */
export class ErpAccess {
  private connected: { readonly connection: ErpConnection; readonly facts: ErpFacts } | undefined;
  /** Whether one of the tool's ERP requests has been sent (the proxy's own lookups are not its requests). */
  private reached = false;

  constructor(
    private readonly inbound: McpInbound,
    private readonly deps: McpDeps,
    private readonly context: CallContext,
    /** The tool whose calls these are: one declared without `writes` sends only read methods. */
    private readonly tool: { readonly name: string; readonly writes: boolean },
  ) {}

  /**
   * A tool declared without `writes` that sends a method outside the read list is a bug in its
   * declaration (it would be listed with `MCP_WRITE_TOOLS=false`, announced read-only, offered
   * to a read key): refused before it reaches the ERP, as an internal error (logged, -32603).
   */
  private declared(method: string): void {
    if (this.tool.writes || isReadMethod(method)) return;
    throw new InternalError(
      new Error(
        `The tool ${this.tool.name}, declared without writes, sent ${method}, which is not a read method.`,
      ),
    );
  }

  /** The request's connection, checked once (headers, then the target policy), with its facts. */
  private connection(): { readonly connection: ErpConnection; readonly facts: ErpFacts } {
    if (this.connected) return this.connected;
    const connection = erpConnection(this.inbound.erp, this.inbound.presentedProxyKey);
    const facts: ErpFacts = { erpHost: connection.baseUrl.host, erpDb: connection.db };
    let baseUrl: URL;
    try {
      baseUrl = checkTarget(this.deps.policy, connection.baseUrl, connection.db);
    } catch (error) {
      throw withFacts(error, facts);
    }
    this.connected = { connection: { ...connection, baseUrl }, facts };
    return this.connected;
  }

  /** The call of `model.method(**kwargs)` on the request's connection, and its facts. */
  private erpCall(
    model: string,
    method: string,
    kwargs: Record<string, unknown>,
  ): { readonly call: ErpCall; readonly facts: ErpFacts } {
    this.declared(method);
    const { connection, facts } = this.connection();
    const { baseUrl, db, apiKey, uid } = connection;
    return {
      call: {
        baseUrl,
        db,
        apiKey,
        ...(uid === undefined ? {} : { uid }),
        model,
        method,
        kwargsJson: JSON.stringify(kwargs),
      },
      facts: { ...facts, model, action: method },
    };
  }

  /**
   * The caller key's policy (README, "Key policies") on one ERP call of a tool, as execute asks it:
   * the model and method exactly as they are sent, the target and the database. `checkModel: false`
   * only for `list_models`' own read of `ir.model`, whose answer {@link modelCatalogue} narrows.
   */
  private async allowedByKey(call: ErpCall, checkModel = true): Promise<void> {
    const pending = checkKeyPolicy(this.inbound.keyPolicy, {
      ...(checkModel ? { model: call.model } : {}),
      method: call.method,
      writes: callWrites(call),
      target: call.baseUrl,
      db: call.db,
    });
    if (pending !== undefined) await pending;
  }

  /**
   * The key policy's `fields` and `companies` rules on one ERP call (core/policy/call-rules.ts),
   * after {@link allowedByKey}: the call as it is sent (its context set) and its answer's filter;
   * `undefined` for a key without such rules (it pays nothing: the call is sent as it is).
   */
  private ruled(call: ErpCall, transport: ErpTransport): Promise<RuledCall> | undefined {
    const policy = this.inbound.keyPolicy;
    if (!hasContentRules(policy)) return undefined;
    const version = this.deps.versions.cached(call.baseUrl)?.version;
    return applyContentRules(policy, call, erpFieldsOf(transport, call, this.context, version));
  }

  /**
   * The key's policy on one of the tool's ERP requests: {@link allowedByKey}, then with `transport`
   * {@link ruled}. A refusal before any of the tool's requests was sent ends a call that never
   * reached the ERP: the limits give its count back (core/limits-check.ts, `refusedBeforeErp`).
   */
  private async checked(
    call: ErpCall,
    transport: ErpTransport | undefined,
    checkModel = true,
  ): Promise<RuledCall | undefined> {
    try {
      await this.allowedByKey(call, checkModel);
      return transport === undefined ? undefined : await this.ruled(call, transport);
    } catch (error) {
      throw this.reached || !isPolicyRefusal(error) ? error : refusedBeforeErp(error);
    }
  }

  /** `model.method(**kwargs)`; `kwargs.ids` for a record method. */
  async named(model: string, method: string, kwargs: Record<string, unknown>): Promise<ErpReply> {
    const { call, facts } = this.erpCall(model, method, kwargs);
    return learnedBefore(facts, async () => {
      const ruled = await this.checked(call, this.deps.named);
      const sent = this.sendNamed(ruled?.call ?? call, ruled?.answer);
      return { value: await this.withVersionOn401(sent), facts };
    });
  }

  /**
   * The proxy's own `fields_get` of `model` (the read tools' field list, kept per target: the key's
   * denied fields are taken out of it after, {@link deniedFields}): the key's policy as for any
   * call, no answer filter.
   */
  async describe(model: string, kwargs: Record<string, unknown>): Promise<ErpReply> {
    const { call, facts } = this.erpCall(model, 'fields_get', kwargs);
    return learnedBefore(facts, async () => {
      await this.checked(call, undefined);
      // A lookup of the proxy's own (a cached field list), not one of the tool's requests: a
      // refusal after it still gives the call's count back, whether the list was cached or not.
      return { value: await this.withVersionOn401(this.sendNamed(call, undefined, false)), facts };
    });
  }

  /**
   * The fields of `model` the caller's policy denies, if any (docs/guide/policies.md): its rule's,
   * and those the model carries by a related path (one cached `fields_get` per model reached).
   */
  async deniedFields(model: string): Promise<FieldTest | undefined> {
    const fields = this.inbound.keyPolicy?.fields;
    if (fields === undefined) return undefined;
    const { call } = this.erpCall(model, 'fields_get', {});
    const version = this.deps.versions.cached(call.baseUrl)?.version;
    return deniedFieldsOf(fields, model, erpFieldsOf(this.deps.named, call, this.context, version));
  }

  /** Which ERP and database this access reaches (a cache key, without the key). */
  targetKey(): string {
    const { baseUrl, db } = this.connection().connection;
    return `${baseUrl.href}\n${db}`;
  }

  /** A 401 carries the ERP's version when it can be had (its advice depends on it: key-scope.ts). */
  private async withVersionOn401<T>(pending: Promise<T>): Promise<T> {
    try {
      return await pending;
    } catch (error) {
      if (error instanceof ErpCallError && error.code === 401) {
        error.erpVersion = await this.version().then(
          (reply) => reply.value,
          () => undefined,
        );
      }
      throw error;
    }
  }

  /**
   * `ir.model.search_read(**kwargs)` for `list_models`: only the models the caller's key may use
   * (its policy's `models`, as a domain, and again on the answer).
   */
  async modelCatalogue(kwargs: Record<string, unknown> & { readonly domain: unknown[] }): Promise<ErpReply> {
    const models = this.inbound.keyPolicy?.models;
    const narrowed =
      models === undefined ? kwargs : { ...kwargs, domain: [...modelListDomain(models), ...kwargs.domain] };
    const { call, facts } = this.erpCall('ir.model', 'search_read', narrowed);
    return learnedBefore(facts, async () => {
      const ruled = await this.checked(call, this.deps.named, false);
      const records = await this.sendNamed(ruled?.call ?? call, ruled?.answer);
      if (models === undefined || !Array.isArray(records)) return { value: records, facts };
      const listed = records.filter((record) => {
        const name = (record as { model?: unknown } | null)?.model;
        return typeof name === 'string' && modelListed(models, name);
      });
      return { value: listed, facts };
    });
  }

  /** Sends `call`; `request`: it is one of the tool's requests (false for the proxy's own lookups). */
  private async sendNamed(call: ErpCall, answer: RuledCall['answer'], request = true): Promise<unknown> {
    if (request) this.reached = true;
    try {
      const outcome = await this.deps.named.call(call, this.context);
      return answerValue(answer === undefined ? outcome : answer(outcome));
    } catch (error) {
      // ERP 16-18 without the user's id: the transport learned the version on the way.
      const version = this.deps.versions.cached(call.baseUrl);
      const major = version ? majorVersion(version) : undefined;
      if (
        error instanceof Json2UnavailableError &&
        call.uid === undefined &&
        major !== undefined &&
        major < FIRST_JSON2_MAJOR
      ) {
        throw missingUserId(major, this.inbound.erp);
      }
      throw error;
    }
  }

  /** `model.method(*args, **kwargs)`, a record method's ids being `args[0]`. */
  async positional(
    model: string,
    method: string,
    args: readonly unknown[],
    kwargs: Record<string, unknown>,
  ): Promise<ErpReply> {
    const named = this.erpCall(model, method, kwargs);
    const asked = { ...named.call, argsJson: JSON.stringify(args) };
    const { facts } = named;
    return learnedBefore(facts, async () => {
      const ruled = await this.checked(asked, this.deps.positional);
      const call = ruled?.call ?? asked;
      if (call.uid === undefined) {
        const major = await this.knownMajor(call.baseUrl, call.db);
        if (major !== undefined && major < FIRST_JSON2_MAJOR) throw missingUserId(major, this.inbound.erp);
      }
      this.reached = true;
      const sent = await this.deps.positional.call(call, this.context);
      const outcome = ruled?.answer === undefined ? sent : ruled.answer(sent);
      if (outcome.kind !== 'erp_error') return { value: answerValue(outcome), facts };
      // v1 answers ERP errors with code 0: give them JSON-2's code (and its name where it differs).
      const failure = json2FailureOf(outcome.data, method);
      const data =
        failure.name !== undefined && isJsonObject(outcome.data)
          ? { ...outcome.data, name: failure.name }
          : outcome.data;
      return this.withVersionOn401(Promise.reject(new ErpCallError(failure.code, outcome.message, data)));
    });
  }

  /** The major version, when the target tells it; `undefined` when it does not (the call then says why). */
  private async knownMajor(baseUrl: URL, db: string): Promise<number | undefined> {
    try {
      return majorVersion(await this.deps.versions.version(baseUrl, { ...this.context, readOnly: true }, db));
    } catch (error) {
      if (error instanceof BadUpstreamResponseError) return undefined;
      throw error;
    }
  }

  /** The ERP's version (the URL header is enough; the database travels when given). */
  async version(): Promise<ErpReply<ErpVersion>> {
    const url = erpUrl(this.inbound.erp);
    const db = erpDatabase(this.inbound.erp);
    const facts: ErpFacts = { erpHost: url.host, ...(db === undefined ? {} : { erpDb: db }) };
    return learnedBefore(facts, async () => {
      const target = checkTarget(this.deps.policy, url, db);
      const pending = checkKeyPolicy(this.inbound.keyPolicy, { target, db });
      if (pending !== undefined) await pending;
      return {
        value: await this.deps.versions.version(target, { ...this.context, readOnly: true }, db),
        facts,
      };
    });
  }
}

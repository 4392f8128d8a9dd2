/**
 * @module core/mcp/erp-access
 * How an MCP tool reaches the ERP of its request: the connection (the `x-erp-*` headers, checked,
 * or the caller's identity-map entry), the target policy as for execute, then the proxy's own
 * transports, so every ERP version is served the way execute serves it (README, "One envelope
 * for every ERP version").
 *
 * One access serves one phase of a tool call, in its own time budget (`context`):
 *
 * - at the gate's `policy` step, the tool's declaration (core/mcp/tool-requests.ts): its lookups
 *   ({@link ErpAccess.version}, {@link ErpAccess.fieldsToRead}), then {@link ErpAccess.rule} on
 *   each declared request: the key's policy as execute asks it (model, method, whether it writes,
 *   target, database), then its `fields` and `companies` rules (core/policy/call-rules.ts), which
 *   give the request as it is sent and its answer's filter;
 * - in the run, {@link ErpAccess.send} sends a declared request as it was ruled, and refuses any
 *   other (-32603: a bug in the tool's declaration); the confirmation form's display names are
 *   lookups of their own ({@link ErpAccess.lookup}), checked by the same rules.
 *
 * The transports:
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

import type { BrakesSource } from '../../platform/brakes/brakes-source.ts';
import type { Config } from '../../platform/config.ts';
import {
  BadUpstreamResponseError,
  InternalError,
  InvalidRequestError,
  Json2UnavailableError,
} from '../../platform/errors.ts';
import { isJsonObject } from '../../platform/json.ts';
import { isReadMethod, modelListDomain, modelListed } from '../../platform/key-policy.ts';
import type { ErpVersion } from '../../upstream/erp-answer.ts';
import type { CallContext, ErpCall, ErpOutcome, ErpTransport } from '../../upstream/erp-transport.ts';
import { type CompiledTargetPolicy, checkTarget } from '../../upstream/target-policy.ts';
import { json2FailureOf } from '../../upstream/v2-over-jsonrpc.ts';
import { majorVersion, type VersionClient } from '../../upstream/version-client.ts';
import type { AuditDeps } from '../audit/audit-call.ts';
import type { ErpAddresses } from '../brakes-check.ts';
import type { ConfirmDeps } from '../confirm/decide.ts';
import type { IdempotencyDeps } from '../idempotency.ts';
import { checkKeyPolicy } from '../key-policy-check.ts';
import type { LimitsDeps } from '../limits-check.ts';
import { applyContentRules, hasContentRules, type RuledCall } from '../policy/call-rules.ts';
import { callWrites } from '../policy/call-writes.ts';
import { erpFieldsOf } from '../policy/erp-fields.ts';
import { deniedFieldsOf, type FieldTest } from '../policy/field-rule.ts';
import { learnedBefore, type RequestFacts, withFacts } from '../request-facts.ts';
import { fieldsToRead } from './binary-fields.ts';
import {
  type ErpConnection,
  erpConnection,
  erpDatabase,
  erpUrl,
  type McpErp,
  type McpInbound,
} from './connection.ts';
import type { ToolLookups, ToolRequest } from './tool-requests.ts';

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
  /** A person's confirmations (docs/guide/confirmations.md): the seal keys, the store, `CONFIRM_TTL`. */
  readonly confirm: ConfirmDeps;
  /** The audit of the write tools' calls (docs/guide/audit.md); absent: none audited (tests of other parts). */
  readonly audit?: AuditDeps;
  /** The instance's copy of the operators' brakes; absent: none (tests of other parts). */
  readonly brakes?: BrakesSource | undefined;
  /** Resolves a host name for an `erp` brake that names an address. */
  readonly brakesAddresses?: ErpAddresses | undefined;
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

/** A declared request as the policy step ruled it: the call as it is sent, and what its answer passes through. */
export interface RuledRequest extends RuledCall {
  readonly facts: ErpFacts;
  /** `list_models`' answer: only the models the key may use; `undefined`: the value as it is. */
  readonly narrow: ((value: unknown) => unknown) | undefined;
}

/** A tool call's declared requests, each as ruled, and the version a lookup read (the run reuses it). */
export interface DeclaredRequests {
  readonly requests: readonly ToolRequest[];
  readonly ruled: ReadonlyMap<ToolRequest, RuledRequest>;
  /** The conditional requests a rule refused, with their refusal (thrown if the run sends one). */
  readonly refused: ReadonlyMap<ToolRequest, unknown>;
  readonly version: ErpVersion | undefined;
}

/** No request declared (a run that sends none: the confirmation form's lookups). */
export const NOTHING_DECLARED: DeclaredRequests = Object.freeze({
  requests: Object.freeze([]),
  ruled: new Map(),
  refused: new Map(),
  version: undefined,
});

/** What a tool's run may do with the ERP: send its declared requests, read the version its lookup read. */
export interface ToolAccess {
  send(request: ToolRequest | undefined): Promise<ErpReply>;
  /** The ERP's version as the policy step's lookup read it (a tool that names the `version` lookup). */
  lookedUpVersion(): ErpReply<ErpVersion>;
}

/** The ERP calls of one phase of a tool call, within one time budget (`context`). */
export class ErpAccess implements ToolLookups, ToolAccess {
  private connected: { readonly connection: ErpConnection; readonly facts: ErpFacts } | undefined;
  private looked: Promise<ErpReply<ErpVersion>> | undefined;

  constructor(
    private readonly inbound: McpInbound,
    private readonly deps: McpDeps,
    /** The phase's call context, or what opens it on first use (the policy step's: core/call-context.ts). */
    private readonly budget: CallContext | (() => CallContext),
    /** The tool whose calls these are: one declared without `writes` sends only read methods. */
    private readonly tool: { readonly name: string; readonly writes: boolean },
    /** What the policy step ruled: the only requests {@link send} sends. */
    private readonly declared: DeclaredRequests = NOTHING_DECLARED,
  ) {}

  /** This phase's call context (opened now if it is opened on first use). */
  private get context(): CallContext {
    return typeof this.budget === 'function' ? this.budget() : this.budget;
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

  /** The call of `request` on the request's connection (`kwargs` as given), and its facts. */
  private erpCall(
    request: Pick<ToolRequest, 'model' | 'method' | 'args'>,
    kwargs: Readonly<Record<string, unknown>>,
  ): { readonly call: ErpCall; readonly facts: ErpFacts } {
    const { connection, facts } = this.connection();
    const { baseUrl, db, apiKey, uid } = connection;
    const { model, method, args } = request;
    return {
      call: {
        baseUrl,
        db,
        apiKey,
        ...(uid === undefined ? {} : { uid }),
        model,
        method,
        ...(args === undefined ? {} : { argsJson: JSON.stringify(args) }),
        kwargsJson: JSON.stringify(kwargs),
      },
      facts: { ...facts, model, action: method },
    };
  }

  /** The transport of a call: positional arguments need the positional one. */
  private transportOf(call: ErpCall): ErpTransport {
    return call.argsJson === undefined ? this.deps.named : this.deps.positional;
  }

  /**
   * The key's policy on `call` as execute asks it (README, "Key policies"): the model and method
   * exactly as they are sent, whether it writes, the target and the database (`checkModel: false`
   * only for `list_models`' catalogue, narrowed instead).
   */
  private async allowedByKey(call: ErpCall, checkModel: boolean): Promise<void> {
    const pending = checkKeyPolicy(this.inbound.keyPolicy, {
      ...(checkModel ? { model: call.model } : {}),
      method: call.method,
      writes: callWrites(call),
      target: call.baseUrl,
      db: call.db,
    });
    if (pending !== undefined) await pending;
  }

  /** The key's `fields` and `companies` rules on `call` (core/policy/call-rules.ts): as it is sent, and its answer's filter. */
  private contentRuled(call: ErpCall): Promise<RuledCall> | RuledCall {
    const policy = this.inbound.keyPolicy;
    if (!hasContentRules(policy)) return { call, answer: undefined };
    const transport = this.transportOf(call);
    const version = this.deps.versions.cached(call.baseUrl)?.version;
    return applyContentRules(policy, call, erpFieldsOf(transport, call, this.context, version));
  }

  /**
   * One of the tool's declared requests, ruled at the policy step: refused (thrown, with its facts)
   * or the call as it will be sent. A tool declared without `writes` that declares a method
   * outside the read list is a bug in its declaration (it would be listed with
   * `MCP_WRITE_TOOLS=false`, announced read-only, offered to a read key): an internal error.
   */
  async rule(request: ToolRequest): Promise<RuledRequest> {
    const models = request.catalogue ? this.inbound.keyPolicy?.models : undefined;
    const domain = request.kwargs.domain;
    const kwargs =
      models === undefined || !Array.isArray(domain)
        ? request.kwargs
        : { ...request.kwargs, domain: [...modelListDomain(models), ...domain] };
    const { call, facts } = this.erpCall(request, kwargs);
    return learnedBefore(facts, async () => {
      if (!this.tool.writes && !isReadMethod(request.method)) {
        throw new InternalError(
          new Error(
            `The tool ${this.tool.name}, declared without writes, declares ${request.method}, which is not a read method.`,
          ),
        );
      }
      await this.allowedByKey(call, request.catalogue !== true);
      if (call.argsJson !== undefined && call.uid === undefined) {
        // ERP 16-18 take positional arguments over execute_kw only, which needs the user's id
        // (asked before the content rules, whose lookups would fail on the way without it).
        const major = await this.knownMajor(call.baseUrl, call.db);
        if (major !== undefined && major < FIRST_JSON2_MAJOR) throw missingUserId(major, this.inbound.erp);
      }
      const ruled = await this.contentRuled(call);
      const narrow =
        models === undefined
          ? undefined
          : (value: unknown) =>
              Array.isArray(value)
                ? value.filter((record) => {
                    const name = (record as { model?: unknown } | null)?.model;
                    return typeof name === 'string' && modelListed(models, name);
                  })
                : value;
      return { ...ruled, facts, narrow };
    });
  }

  /**
   * Sends one of the tool's declared requests as the policy step ruled it (its context set, its
   * answer filtered). A request the declaration did not name is refused before the ERP: an
   * internal error (logged, -32603), as a tool's bug.
   */
  async send(request: ToolRequest | undefined): Promise<ErpReply> {
    // A conditional request a rule refused: its refusal, now that the run needs it.
    if (request !== undefined && this.declared.refused.has(request)) throw this.declared.refused.get(request);
    const ruled = request === undefined ? undefined : this.declared.ruled.get(request);
    if (ruled === undefined) {
      const what = request === undefined ? 'a request' : `${request.model}.${request.method}`;
      throw new InternalError(
        new Error(`The tool ${this.tool.name} sent ${what}, which its declaration does not name.`),
      );
    }
    const { facts } = ruled;
    return learnedBefore(facts, async () => {
      const value =
        ruled.call.argsJson === undefined
          ? await this.withVersionOn401(this.sendNamed(ruled.call, ruled.answer))
          : await this.sendPositional(ruled.call, ruled.answer);
      return { value: ruled.narrow === undefined ? value : ruled.narrow(value), facts };
    });
  }

  /**
   * A lookup of the proxy's own that reads records (the confirmation form's display names:
   * core/mcp/display-names.ts): read methods only, checked by the key's rules as a declared
   * request is, and sent in this phase's budget; never one of the tool's requests.
   */
  async lookup(model: string, method: string, kwargs: Record<string, unknown>): Promise<ErpReply> {
    if (!isReadMethod(method)) {
      throw new InternalError(new Error(`The proxy's lookup ${model}.${method} is not a read.`));
    }
    const { call, facts } = this.erpCall({ model, method }, kwargs);
    return learnedBefore(facts, async () => {
      await this.allowedByKey(call, true);
      const ruled = await this.contentRuled(call);
      return { value: await this.sendNamed(ruled.call, ruled.answer), facts };
    });
  }

  /**
   * The proxy's own `fields_get` of `model` (the read tools' field list, kept per target: the key's
   * denied fields are taken out of it after, {@link deniedFields}), never sent to a model, target
   * or database the key may not use (the `methods` rule is the caller's own methods': this is
   * the proxy's lookup), no answer filter.
   */
  async describe(model: string, kwargs: Record<string, unknown>): Promise<ErpReply> {
    const { call, facts } = this.erpCall({ model, method: 'fields_get' }, kwargs);
    return learnedBefore(facts, async () => {
      const pending = checkKeyPolicy(this.inbound.keyPolicy, { model, target: call.baseUrl, db: call.db });
      if (pending !== undefined) await pending;
      return { value: await this.withVersionOn401(this.sendNamed(call, undefined)), facts };
    });
  }

  /**
   * The fields of `model` the caller's policy denies, if any (docs/guide/policies.md): its rule's,
   * and those the model carries by a related path (one cached `fields_get` per model reached).
   */
  async deniedFields(model: string): Promise<FieldTest | undefined> {
    const fields = this.inbound.keyPolicy?.fields;
    if (fields === undefined) return undefined;
    const { call } = this.erpCall({ model, method: 'fields_get' }, {});
    const version = this.deps.versions.cached(call.baseUrl)?.version;
    return deniedFieldsOf(fields, model, erpFieldsOf(this.deps.named, call, this.context, version));
  }

  /** The read tools' `fields` (core/mcp/binary-fields.ts), from this access's lookups. */
  fieldsToRead(model: string, given: readonly string[] | undefined): Promise<readonly string[] | undefined> {
    return fieldsToRead(this, model, given);
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
        error.erpVersion = await this.erpVersion().then(
          (reply) => reply.value,
          () => undefined,
        );
      }
      throw error;
    }
  }

  /** Sends a named call; its answer through `answer` when the rules gave one. */
  private async sendNamed(call: ErpCall, answer: RuledCall['answer']): Promise<unknown> {
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

  /** Sends a call with positional arguments (a record method's ids being `args[0]`). */
  private async sendPositional(call: ErpCall, answer: RuledCall['answer']): Promise<unknown> {
    const sent = await this.deps.positional.call(call, this.context);
    const outcome = answer === undefined ? sent : answer(sent);
    if (outcome.kind !== 'erp_error') return answerValue(outcome);
    // v1 answers ERP errors with code 0: give them JSON-2's code (and its name where it differs).
    const failure = json2FailureOf(outcome.data, call.method);
    const data =
      failure.name !== undefined && isJsonObject(outcome.data)
        ? { ...outcome.data, name: failure.name }
        : outcome.data;
    return this.withVersionOn401(Promise.reject(new ErpCallError(failure.code, outcome.message, data)));
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

  /** The version the policy step's lookup read, with its facts; a tool that did not name the lookup: a bug. */
  lookedUpVersion(): ErpReply<ErpVersion> {
    const version = this.declared.version;
    if (version === undefined) {
      throw new InternalError(new Error(`The tool ${this.tool.name} reads a version it did not look up.`));
    }
    return { value: version, facts: this.versionFacts().facts };
  }

  /** What a version lookup reaches: the URL (the database when given), and its facts. */
  private versionFacts(): { readonly url: URL; readonly db: string | undefined; readonly facts: ErpFacts } {
    const url = erpUrl(this.inbound.erp);
    const db = erpDatabase(this.inbound.erp);
    return { url, db, facts: { erpHost: url.host, ...(db === undefined ? {} : { erpDb: db }) } };
  }

  /** The ERP's version: the lookup {@link ToolLookups.version}. */
  async version(): Promise<ErpVersion> {
    return (await this.erpVersion()).value;
  }

  /**
   * The ERP's version with its facts (the URL header is enough; the database travels when given),
   * read once per access: the one the policy step read when it did.
   */
  erpVersion(): Promise<ErpReply<ErpVersion>> {
    this.looked ??= this.readVersion();
    return this.looked;
  }

  private readVersion(): Promise<ErpReply<ErpVersion>> {
    const { url, db, facts } = this.versionFacts();
    return learnedBefore(facts, async () => {
      const known = this.declared.version;
      if (known !== undefined) return { value: known, facts };
      const target = checkTarget(this.deps.policy, url, db);
      const pending = checkKeyPolicy(this.inbound.keyPolicy, { target, db });
      if (pending !== undefined) await pending;
      return {
        value: await this.deps.versions.version(target, { ...this.context, readOnly: true }, db),
        facts,
      };
    });
  }

  /** The version this access read, if it read one (handed from the policy step to the run); `undefined`: none asked. */
  versionRead(): Promise<ErpVersion | undefined> | undefined {
    return this.looked?.then(
      (reply) => reply.value,
      () => undefined,
    );
  }
}

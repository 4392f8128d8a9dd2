/**
 * @module upstream/method-docs
 * The ERP's own method documentation, `GET /doc-bearer/<model>.json` (Odoo 19+, `api_doc`), read
 * for the parameter names of a v1 `call_method` translated to JSON-2. Documents are cached per
 * target, database and model, and revalidated with their ETag (a 304 costs the ERP ~12 ms, a
 * full document 140-400 ms). A document that cannot be had (a key without Odoo's "Technical
 * Documentation" group gets 403, older builds 404) is remembered briefly per key, so such
 * callers do not ask for it on every call.
 */
import { createHash } from 'node:crypto';
import { ProxyError, UpstreamTimeoutError, UpstreamUnavailableError } from '../platform/errors.ts';
import { docBearerPath } from './erp-paths.ts';
import {
  type CallContext,
  classifyGatewayAnswer,
  databaseHeader,
  parseJsonBody,
  sendExchange,
  upstreamUrl,
} from './erp-transport.ts';
import type { HttpClient } from './http-client.ts';
import { type MethodSignature, signaturesFromDoc } from './method-signatures.ts';

/** What the documentation says about one method. */
export type DocLookup =
  | { readonly kind: 'documented'; readonly signature: MethodSignature }
  /** The document was read, but does not list the method (deprecated, or not public). */
  | { readonly kind: 'undocumented' }
  /** No document: the key may not read it, or the ERP does not serve one. */
  | { readonly kind: 'unavailable'; readonly status?: number };

export interface MethodDocTarget {
  readonly baseUrl: URL;
  readonly db: string;
  readonly apiKey: string;
  readonly model: string;
}

/**
 * What a v1 call translated to JSON-2 asks the documentation. {@link MethodDocClient} answers it;
 * a runtime may load that client on the first question (handlers/runtime-parts.ts).
 */
export interface MethodDocs {
  lookup(target: MethodDocTarget, method: string, context: CallContext): Promise<DocLookup>;
}

export interface MethodDocOptions {
  /** How long a document is used before it is revalidated with its ETag. */
  readonly freshMs?: number;
  /** How long a missing document (403, 404) is remembered for one key. */
  readonly unavailableMs?: number;
  /** Documents (and misses) kept at most; the oldest goes first. */
  readonly maxEntries?: number;
  readonly now?: () => number;
}

interface DocEntry {
  readonly etag: string | undefined;
  readonly signatures: ReadonlyMap<string, MethodSignature>;
  checkedAt: number;
}

const DEFAULT_FRESH_MS = 60_000;
const DEFAULT_UNAVAILABLE_MS = 60_000;
const DEFAULT_MAX_ENTRIES = 256;

export class MethodDocClient implements MethodDocs {
  private readonly docs = new Map<string, DocEntry>();
  private readonly misses = new Map<string, { until: number; status: number | undefined }>();
  private readonly freshMs: number;
  private readonly unavailableMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(
    private readonly client: HttpClient,
    options: MethodDocOptions = {},
  ) {
    this.freshMs = options.freshMs ?? DEFAULT_FRESH_MS;
    this.unavailableMs = options.unavailableMs ?? DEFAULT_UNAVAILABLE_MS;
    this.maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
    this.now = options.now ?? Date.now;
  }

  /**
   * The signature of `method` on the target's `model`. Throws only what says the ERP is
   * unreachable (-32004); any other trouble reading the document is `unavailable`, and the
   * caller goes on without it.
   */
  async lookup(target: MethodDocTarget, method: string, context: CallContext): Promise<DocLookup> {
    const docKey = `${target.baseUrl.href}\n${target.db}\n${target.model}`;
    const missKey = `${docKey}\n${createHash('sha256').update(target.apiKey).digest('base64url')}`;
    const now = this.now();
    let entry = this.docs.get(docKey);
    const miss = this.misses.get(missKey);
    // A document another key fetched serves this key too: it only names arguments.
    const knownMiss = miss !== undefined && miss.until > now;
    if (!entry && knownMiss) return { kind: 'unavailable', status: miss.status };
    if (!knownMiss && (!entry || now - entry.checkedAt >= this.freshMs)) {
      const fetched = await this.fetch(target, entry?.etag, context);
      if (fetched === 'not_modified' && entry) {
        entry.checkedAt = this.now();
      } else if (fetched === 'not_modified' || 'status' in fetched) {
        const status = fetched === 'not_modified' ? undefined : fetched.status;
        // A 401 is the key's own problem: the call itself will say so. Other misses are kept.
        if (status !== 401) this.remember(this.misses, missKey, { until: now + this.unavailableMs, status });
        // A document fetched earlier by another key stays usable.
        if (!entry) return { kind: 'unavailable', ...(status === undefined ? {} : { status }) };
      } else {
        entry = { ...fetched, checkedAt: this.now() };
        this.remember(this.docs, docKey, entry);
        this.misses.delete(missKey);
      }
    }
    if (!entry) return { kind: 'unavailable' };
    const signature = entry.signatures.get(method);
    return signature ? { kind: 'documented', signature } : { kind: 'undocumented' };
  }

  private remember<V>(map: Map<string, V>, key: string, value: V): void {
    map.delete(key);
    if (map.size >= this.maxEntries) {
      const oldest = map.keys().next();
      if (!oldest.done) map.delete(oldest.value);
    }
    map.set(key, value);
  }

  private async fetch(
    target: MethodDocTarget,
    etag: string | undefined,
    context: CallContext,
  ): Promise<
    | 'not_modified'
    | { readonly status: number | undefined }
    | { readonly etag: string | undefined; readonly signatures: ReadonlyMap<string, MethodSignature> }
  > {
    // Outside the try: a name off the grammar is -32007, never "not documented".
    const path = docBearerPath(target.model);
    let response: Awaited<ReturnType<typeof sendExchange>>;
    try {
      response = await sendExchange(
        this.client,
        { ...context, readOnly: true },
        {
          method: 'GET',
          url: upstreamUrl(target.baseUrl, path),
          headers: {
            authorization: `bearer ${target.apiKey}`,
            ...databaseHeader(target.db),
            ...(etag === undefined ? {} : { 'if-none-match': etag }),
          },
        },
      );
    } catch (error) {
      if (error instanceof UpstreamUnavailableError) throw error;
      // Only the documentation was being read: the call itself did not run.
      if (error instanceof UpstreamTimeoutError) {
        throw new UpstreamUnavailableError(
          `The ERP did not answer the method documentation request (/doc-bearer/${target.model}.json) in time. ` +
            'The call did not run; retry later.',
          { cause: error },
        );
      }
      if (error instanceof ProxyError) return { status: undefined };
      throw error;
    }
    if (response.status === 304) return 'not_modified';
    const gateway = classifyGatewayAnswer(response);
    if (gateway instanceof UpstreamUnavailableError) throw gateway;
    if (response.status !== 200) return { status: response.status };
    let signatures: Map<string, MethodSignature> | undefined;
    try {
      const json = parseJsonBody(response);
      signatures = json.ok ? signaturesFromDoc(json.value) : undefined;
    } catch {
      // Nested too deep to be a document: treated like any other unreadable answer.
    }
    if (!signatures) return { status: response.status };
    const tag = response.headers.etag;
    return { etag: typeof tag === 'string' && tag.length <= 256 ? tag : undefined, signatures };
  }
}

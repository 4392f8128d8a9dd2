/**
 * A `fetch` for the client under test that records what the client sent to the proxy (path,
 * headers, the envelope body) and what status came back, then behaves like the real one.
 * Records hold keys: assert on single fields, never print a whole record.
 */

export interface SentCall {
  readonly path: string;
  readonly headers: Headers;
  readonly body: Record<string, unknown>;
  /** The HTTP status of the answer; 0 when none came. */
  status: number;
}

export interface RecordingFetch {
  readonly fetch: typeof fetch;
  readonly sent: SentCall[];
  /** The calls sent to `path` (e.g. `/api/erp/version`). */
  to(path: string): SentCall[];
}

/** Records every call, and runs `after` (if given) once each answer is in, before the client reads it. */
export function recordingFetch(after?: (call: SentCall) => Promise<void> | void): RecordingFetch {
  const sent: SentCall[] = [];
  const wrapped: typeof fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const call: SentCall = {
      path: url.pathname,
      headers: new Headers(init?.headers),
      body: JSON.parse(String(init?.body ?? '{}')) as Record<string, unknown>,
      status: 0,
    };
    sent.push(call);
    try {
      const response = await fetch(input, init);
      call.status = response.status;
      return response;
    } finally {
      await after?.(call);
    }
  };
  return { fetch: wrapped, sent, to: (path) => sent.filter((call) => call.path === path) };
}

/**
 * @module platform/json
 * Small JSON helpers shared by request validation and the transports.
 */

/**
 * Deepest nesting the proxy accepts in a request or an ERP answer. Real ERP payloads nest a
 * dozen levels at most (x2many commands inside values inside lists); `JSON.parse` accepts far
 * deeper input than `JSON.stringify` can write back (it overflows the stack), so the bound
 * keeps such input a clear error instead of an internal one.
 */
export const MAX_JSON_DEPTH = 100;

/** A JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Whether a parsed JSON value nests deeper than `maxDepth` (checked without recursion). */
export function exceedsDepth(value: unknown, maxDepth: number = MAX_JSON_DEPTH): boolean {
  const pending: Array<{ node: object; depth: number }> = [];
  if (value !== null && typeof value === 'object') pending.push({ node: value, depth: 1 });
  while (pending.length > 0) {
    const { node, depth } = pending.pop()!;
    if (depth > maxDepth) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') pending.push({ node: child, depth: depth + 1 });
    }
  }
  return false;
}

/** Where a top-level member's value sits in the scanned bytes (`end` exclusive). */
export interface ValueSpan {
  readonly start: number;
  readonly end: number;
}

export type JsonScan =
  | {
      readonly ok: true;
      /** With `topLevelMembers`, when the value is an object: where each member's value sits. */
      readonly members: ReadonlyMap<string, ValueSpan> | undefined;
      /** With `topLevelMembers`, when the value is an array: where each element sits, in order. */
      readonly elements?: readonly ValueSpan[];
    }
  | {
      readonly ok: false;
      readonly reason: 'syntax' | 'depth';
      /** With `topLevelMembers`: the members whose values ended before the scan stopped. */
      readonly members?: ReadonlyMap<string, ValueSpan>;
    };

const OBJECT = 1;
const ARRAY = 2;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function isWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

function isDigit(byte: number | undefined): boolean {
  return byte !== undefined && byte >= 0x30 && byte <= 0x39;
}

function isHex(byte: number | undefined): boolean {
  return (
    byte !== undefined && ((byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x66))
  );
}

class JsonSyntaxError extends Error {}

/** Bytes that end the fast path inside a string: `"`, `\` and control characters. */
const STRING_STOP = new Uint8Array(256);
for (let byte = 0; byte < 0x20; byte += 1) STRING_STOP[byte] = 1;
STRING_STOP[QUOTE] = 1;
STRING_STOP[BACKSLASH] = 1;

/** End index of the string that opens at `start`, validating escapes and control characters. */
function scanString(bytes: Buffer, start: number): number {
  const length = bytes.length;
  let i = start + 1;
  while (i < length) {
    // Most string bytes are plain: one table load per byte until something needs a look.
    while (i < length && STRING_STOP[bytes[i] as number] === 0) i += 1;
    if (i >= length) break;
    const byte = bytes[i] as number;
    if (byte === QUOTE) return i + 1;
    if (byte === BACKSLASH) {
      const escaped = bytes[i + 1];
      if (escaped === 0x75) {
        if (!(isHex(bytes[i + 2]) && isHex(bytes[i + 3]) && isHex(bytes[i + 4]) && isHex(bytes[i + 5]))) {
          throw new JsonSyntaxError();
        }
        i += 6;
        continue;
      }
      // " \ / b f n r t
      if (
        escaped !== QUOTE &&
        escaped !== BACKSLASH &&
        escaped !== 0x2f &&
        escaped !== 0x62 &&
        escaped !== 0x66 &&
        escaped !== 0x6e &&
        escaped !== 0x72 &&
        escaped !== 0x74
      ) {
        throw new JsonSyntaxError();
      }
      i += 2;
      continue;
    }
    if (byte < 0x20) throw new JsonSyntaxError();
    i += 1;
  }
  throw new JsonSyntaxError();
}

/** End index of the number that starts at `start` (strict JSON grammar). */
function scanNumber(bytes: Buffer, start: number): number {
  let i = start;
  if (bytes[i] === 0x2d) i += 1;
  if (bytes[i] === 0x30) i += 1;
  else if (isDigit(bytes[i])) while (isDigit(bytes[i])) i += 1;
  else throw new JsonSyntaxError();
  if (bytes[i] === 0x2e) {
    i += 1;
    if (!isDigit(bytes[i])) throw new JsonSyntaxError();
    while (isDigit(bytes[i])) i += 1;
  }
  if (bytes[i] === 0x65 || bytes[i] === 0x45) {
    i += 1;
    if (bytes[i] === 0x2b || bytes[i] === 0x2d) i += 1;
    if (!isDigit(bytes[i])) throw new JsonSyntaxError();
    while (isDigit(bytes[i])) i += 1;
  }
  return i;
}

function scanLiteral(bytes: Buffer, start: number, literal: string): number {
  for (let k = 0; k < literal.length; k += 1) {
    if (bytes[start + k] !== literal.charCodeAt(k)) throw new JsonSyntaxError();
  }
  return start + literal.length;
}

/**
 * Validates JSON bytes without building any object (a large ERP answer is passed on as the
 * bytes it came in, so neither memory nor time is spent on parsing and re-serializing it), and
 * bounds its nesting. With `topLevelMembers`, also returns where each member of a top-level
 * object sits (a JSON-RPC envelope's `result` or `error`), or each element of a top-level array
 * (a v1 call's positional `params`).
 */
export function scanJson(
  bytes: Buffer,
  options: { readonly maxDepth?: number; readonly topLevelMembers?: boolean } = {},
): JsonScan {
  const members = options.topLevelMembers === true ? new Map<string, ValueSpan>() : undefined;
  try {
    return scanValue(bytes, options.maxDepth ?? MAX_JSON_DEPTH, members);
  } catch (error) {
    if (error instanceof JsonSyntaxError)
      return { ok: false, reason: 'syntax', ...(members ? { members } : {}) };
    throw error;
  }
}

/** A JSON document read in one scan: its value, and the text of each top-level member. */
export type JsonDocument =
  | {
      readonly ok: true;
      readonly value: unknown;
      /** Each top-level member's value as written (`1.0`, `1e400` keep their spelling); empty unless an object. */
      readonly members: ReadonlyMap<string, string>;
      /** It nests deeper than the bound (the value is still read, for the caller's own message). */
      readonly tooDeep: boolean;
    }
  | { readonly ok: false; readonly position: number | undefined };

/**
 * Reads a JSON text with `JSON.parse`, then {@link jsonDocumentOf}. A repeated member is the last
 * one, as in `JSON.parse`.
 */
export function readJsonDocument(text: string, maxDepth: number = MAX_JSON_DEPTH): JsonDocument {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, position: syntaxPositionOf(error) };
  }
  return jsonDocumentOf(text, value, maxDepth);
}

/**
 * The document of a JSON text already parsed into `value` (by `JSON.parse`, or a body parser that
 * uses it): one scan of the text gives its depth and each top-level member's text as written.
 */
export function jsonDocumentOf(
  text: string,
  value: unknown,
  maxDepth: number = MAX_JSON_DEPTH,
): JsonDocument {
  const bytes = Buffer.from(text, 'utf8');
  let scan = scanJson(bytes, { topLevelMembers: true, maxDepth });
  // The scanner and JSON.parse read the same grammar; a text one refuses is not a document.
  if (!scan.ok && scan.reason === 'syntax') return { ok: false, position: syntaxPosition(text) };
  let tooDeep = false;
  if (!scan.ok) {
    // The text nests too deep; the value may not (a repeated member overridden by a shallow one
    // counts as JSON.parse reads it). Only then a second, unbounded scan, for the members.
    tooDeep = exceedsDepth(value, maxDepth);
    if (!tooDeep) scan = scanJson(bytes, { topLevelMembers: true, maxDepth: Number.POSITIVE_INFINITY });
  }
  const members = new Map<string, string>();
  if (scan.ok) {
    for (const [name, span] of scan.members ?? [])
      members.set(name, bytes.toString('utf8', span.start, span.end));
  }
  return { ok: true, value, members, tooDeep };
}

/** The position a `JSON.parse` error names (V8: "... in JSON at position 12"), if any. */
export function syntaxPositionOf(error: unknown): number | undefined {
  const position = /position (\d+)/.exec(error instanceof Error ? error.message : '')?.[1];
  return position === undefined ? undefined : Number(position);
}

/** Where `JSON.parse` finds `text` broken, for a message (the text around it is never quoted). */
function syntaxPosition(text: string): number | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (error) {
    return syntaxPositionOf(error);
  }
}

/**
 * The value of the top-level string member `name` within the start of a JSON object text that may
 * be cut off or broken further on: what the scan found before it stopped (the last one, when
 * repeated), or `null` when it is not there or not a string. Linear in the text given.
 */
export function leadingStringMember(text: string, name: string): string | null {
  const start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const bytes = Buffer.from(start === 0 ? text : text.slice(start), 'utf8');
  if (bytes[firstNonSpace(bytes)] !== 0x7b) return null;
  const scan = scanJson(bytes, { topLevelMembers: true });
  const span = scan.members?.get(name);
  if (span === undefined || bytes[span.start] !== QUOTE) return null;
  const value: unknown = JSON.parse(bytes.toString('utf8', span.start, span.end));
  return typeof value === 'string' ? value : null;
}

function firstNonSpace(bytes: Buffer): number {
  let i = 0;
  while (i < bytes.length && isWhitespace(bytes[i] as number)) i += 1;
  return i;
}

/** The JSON text of the top-level members (an object) or elements (an array) of a JSON text. */
export interface TopLevelTexts {
  readonly members: ReadonlyMap<string, string>;
  readonly elements: readonly string[];
}

/**
 * The top-level members or elements of JSON that was already parsed or validated, each as the
 * bytes it was written with (`1.0`, `1e400` and 20-digit integers keep their spelling). No depth
 * bound: the depth check ran on the parsed value. A repeated member is the last one, as in
 * `JSON.parse`. Throws when the text is not JSON: a bug of the caller.
 */
export function topLevelTexts(text: string): TopLevelTexts {
  const bytes = Buffer.from(text, 'utf8');
  const scan = scanJson(bytes, { topLevelMembers: true, maxDepth: Number.POSITIVE_INFINITY });
  if (!scan.ok) throw new Error('validated JSON did not scan');
  const members = new Map<string, string>();
  for (const [name, span] of scan.members ?? [])
    members.set(name, bytes.toString('utf8', span.start, span.end));
  const elements = (scan.elements ?? []).map((span) => bytes.toString('utf8', span.start, span.end));
  return { members, elements };
}

/**
 * The scanner's loop. No closures over the position and whitespace skipped inline: measured
 * 23 ms against 31.5 ms per 5 MB with closures (V8 keeps a captured, mutated index in memory).
 */
function scanValue(bytes: Buffer, maxDepth: number, members: Map<string, ValueSpan> | undefined): JsonScan {
  const length = bytes.length;
  const elements: ValueSpan[] | undefined = members ? [] : undefined;
  const stack: number[] = [];
  let memberKey: string | undefined;
  let memberStart = 0;
  let elementStart = -1;
  let i = 0;
  while (i < length && isWhitespace(bytes[i] as number)) i += 1;
  let expectValue = true;
  let expectKey = false;
  for (;;) {
    if (expectKey) {
      if (bytes[i] !== QUOTE) throw new JsonSyntaxError();
      const keyStart = i;
      i = scanString(bytes, i);
      if (members !== undefined && stack.length === 1)
        memberKey = JSON.parse(bytes.toString('utf8', keyStart, i)) as string;
      while (i < length && isWhitespace(bytes[i] as number)) i += 1;
      if (bytes[i] !== 0x3a) throw new JsonSyntaxError();
      i += 1;
      while (i < length && isWhitespace(bytes[i] as number)) i += 1;
      if (members !== undefined && stack.length === 1) memberStart = i;
      expectKey = false;
      expectValue = true;
      continue;
    }
    if (expectValue) {
      const byte = bytes[i];
      if (elements !== undefined && stack.length === 1 && stack[0] === ARRAY) elementStart = i;
      if (byte === 0x7b || byte === 0x5b) {
        stack.push(byte === 0x7b ? OBJECT : ARRAY);
        if (stack.length > maxDepth) return { ok: false, reason: 'depth', ...(members ? { members } : {}) };
        i += 1;
        while (i < length && isWhitespace(bytes[i] as number)) i += 1;
        if (bytes[i] === (byte === 0x7b ? 0x7d : 0x5d)) {
          i += 1;
          stack.pop();
          expectValue = false;
        } else if (byte === 0x7b) expectKey = true;
        continue;
      }
      if (byte === QUOTE) i = scanString(bytes, i);
      else if (byte === 0x74) i = scanLiteral(bytes, i, 'true');
      else if (byte === 0x66) i = scanLiteral(bytes, i, 'false');
      else if (byte === 0x6e) i = scanLiteral(bytes, i, 'null');
      else if (byte === 0x2d || isDigit(byte)) i = scanNumber(bytes, i);
      else throw new JsonSyntaxError();
      expectValue = false;
      continue;
    }
    if (members !== undefined && memberKey !== undefined && stack.length === 1) {
      members.set(memberKey, { start: memberStart, end: i });
      memberKey = undefined;
    } else if (elements !== undefined && elementStart >= 0 && stack.length === 1) {
      elements.push({ start: elementStart, end: i });
      elementStart = -1;
    }
    while (i < length && isWhitespace(bytes[i] as number)) i += 1;
    if (stack.length === 0) {
      if (i !== length) throw new JsonSyntaxError();
      return elements !== undefined && elements.length > 0
        ? { ok: true, members, elements }
        : { ok: true, members };
    }
    const container = stack[stack.length - 1];
    const byte = bytes[i];
    if (byte === 0x2c) {
      i += 1;
      while (i < length && isWhitespace(bytes[i] as number)) i += 1;
      if (container === OBJECT) expectKey = true;
      else expectValue = true;
    } else if ((byte === 0x7d && container === OBJECT) || (byte === 0x5d && container === ARRAY)) {
      i += 1;
      stack.pop();
    } else throw new JsonSyntaxError();
  }
}

/** Where {@link canonicalJson} leaves a member out: its path of member names from the top. */
export type OmitMember = (path: readonly string[]) => boolean;

/**
 * The canonical text of JSON already validated (an idempotency fingerprint's input,
 * `core/idempotency.ts`): no whitespace, each object's members sorted by name (UTF-16 code units;
 * a repeated name is the last one, as in `JSON.parse`), strings written as `JSON.stringify`
 * writes them (`"\u0041"` is `"A"`: the ERP reads both as one string), and numbers exactly as
 * written: `1.0` stays `1.0`, `1e2` stays `1e2`, `12345678901234567890` keeps every digit, because
 * the ERP may read two spellings differently. `omit` leaves out members by their path. Throws when
 * the text is not JSON: a bug of the caller. Recursive: the nesting was bounded when the text was
 * validated (`MAX_JSON_DEPTH`).
 *
 * @example
 * canonicalJson('{ "b": 1.0, "a": [ "\\u0041" ] }') // '{"a":["A"],"b":1.0}'
 */
export function canonicalJson(text: string, omit?: OmitMember): string {
  const bytes = Buffer.from(text, 'utf8');
  try {
    const [canonical, end] = canonicalValue(bytes, skipSpace(bytes, 0), [], omit);
    if (skipSpace(bytes, end) !== bytes.length) throw new JsonSyntaxError();
    return canonical;
  } catch (error) {
    if (error instanceof JsonSyntaxError) throw new Error('canonicalJson: the text is not JSON');
    throw error;
  }
}

function skipSpace(bytes: Buffer, start: number): number {
  let i = start;
  while (i < bytes.length && isWhitespace(bytes[i] as number)) i += 1;
  return i;
}

/** The canonical text of the value at `start`, and where it ends. */
function canonicalValue(
  bytes: Buffer,
  start: number,
  path: readonly string[],
  omit: OmitMember | undefined,
): [string, number] {
  const byte = bytes[start];
  if (byte === QUOTE) {
    const end = scanString(bytes, start);
    return [JSON.stringify(JSON.parse(bytes.toString('utf8', start, end)) as string), end];
  }
  if (byte === 0x2d || isDigit(byte)) {
    const end = scanNumber(bytes, start);
    return [bytes.toString('latin1', start, end), end];
  }
  if (byte === 0x74) return ['true', scanLiteral(bytes, start, 'true')];
  if (byte === 0x66) return ['false', scanLiteral(bytes, start, 'false')];
  if (byte === 0x6e) return ['null', scanLiteral(bytes, start, 'null')];
  if (byte === 0x5b) {
    const items: string[] = [];
    let i = skipSpace(bytes, start + 1);
    if (bytes[i] === 0x5d) return ['[]', i + 1];
    for (;;) {
      const [item, end] = canonicalValue(bytes, i, path, omit);
      items.push(item);
      i = skipSpace(bytes, end);
      if (bytes[i] === 0x5d) return [`[${items.join(',')}]`, i + 1];
      if (bytes[i] !== 0x2c) throw new JsonSyntaxError();
      i = skipSpace(bytes, i + 1);
    }
  }
  if (byte === 0x7b) {
    const members = new Map<string, string>();
    let i = skipSpace(bytes, start + 1);
    if (bytes[i] === 0x7d) return ['{}', i + 1];
    for (;;) {
      if (bytes[i] !== QUOTE) throw new JsonSyntaxError();
      const keyEnd = scanString(bytes, i);
      const name = JSON.parse(bytes.toString('utf8', i, keyEnd)) as string;
      i = skipSpace(bytes, keyEnd);
      if (bytes[i] !== 0x3a) throw new JsonSyntaxError();
      const memberPath = [...path, name];
      const [value, end] = canonicalValue(bytes, skipSpace(bytes, i + 1), memberPath, omit);
      // A repeated name: the last one counts (JSON.parse), in the place of its name's order.
      members.delete(name);
      if (omit === undefined || !omit(memberPath)) members.set(name, value);
      i = skipSpace(bytes, end);
      if (bytes[i] === 0x7d) break;
      if (bytes[i] !== 0x2c) throw new JsonSyntaxError();
      i = skipSpace(bytes, i + 1);
    }
    const names = [...members.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return [`{${names.map((name) => `${JSON.stringify(name)}:${members.get(name)}`).join(',')}}`, i + 1];
  }
  throw new JsonSyntaxError();
}

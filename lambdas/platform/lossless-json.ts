/**
 * @module platform/lossless-json
 * JSON read and written back with every number exactly as it was spelt (`1.0`, `1e400`, a 20-digit
 * integer): what the key policies' rules use when they must change a request or an answer (a
 * company context set, a denied field removed), so that what they leave alone reaches the ERP or
 * the client as the ERP or the client wrote it. Only calls of keys with such rules pay for it.
 * Strings are written back as `JSON.stringify` writes them (`"\u0041"` is `"A"`: one string to
 * every JSON reader).
 */

/** A JSON number, as it was spelt. */
export class JsonNumber {
  constructor(readonly text: string) {}

  /** Its value as a JavaScript number (rounded as `JSON.parse` would). */
  valueOf(): number {
    return Number(this.text);
  }
}

/** A value read by {@link parseLossless}: JSON's, with {@link JsonNumber} for numbers. */
export type LosslessValue =
  | null
  | boolean
  | string
  | JsonNumber
  | LosslessValue[]
  | { [name: string]: LosslessValue };

class LosslessSyntaxError extends Error {}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
/** A string token (its escapes are checked by `JSON.parse`, which reads it). */
const STRING = /"(?:[^"\\]|\\.)*"/y;
const SPACE = /[ \t\n\r]*/y;

/** A parser over one text; recursive (the text's nesting was bounded when it was first read). */
class Reader {
  private at = 0;

  constructor(private readonly text: string) {}

  document(): LosslessValue {
    const value = this.value();
    this.space();
    if (this.at !== this.text.length) throw new LosslessSyntaxError();
    return value;
  }

  private space(): void {
    SPACE.lastIndex = this.at;
    SPACE.exec(this.text);
    this.at = SPACE.lastIndex;
  }

  private match(pattern: RegExp): string {
    pattern.lastIndex = this.at;
    const found = pattern.exec(this.text);
    if (found === null) throw new LosslessSyntaxError();
    this.at = pattern.lastIndex;
    return found[0];
  }

  private literal<T extends boolean | null>(word: string, value: T): T {
    if (!this.text.startsWith(word, this.at)) throw new LosslessSyntaxError();
    this.at += word.length;
    return value;
  }

  private value(): LosslessValue {
    this.space();
    const char = this.text[this.at];
    if (char === '{') return this.object();
    if (char === '[') return this.array();
    if (char === '"') return JSON.parse(this.match(STRING)) as string;
    if (char === 't') return this.literal('true', true);
    if (char === 'f') return this.literal('false', false);
    if (char === 'n') return this.literal('null', null);
    return new JsonNumber(this.match(NUMBER));
  }

  private array(): LosslessValue[] {
    this.at += 1;
    const items: LosslessValue[] = [];
    this.space();
    if (this.text[this.at] === ']') {
      this.at += 1;
      return items;
    }
    for (;;) {
      items.push(this.value());
      this.space();
      const char = this.text[this.at++];
      if (char === ']') return items;
      if (char !== ',') throw new LosslessSyntaxError();
    }
  }

  private object(): { [name: string]: LosslessValue } {
    this.at += 1;
    const members: { [name: string]: LosslessValue } = {};
    this.space();
    if (this.text[this.at] === '}') {
      this.at += 1;
      return members;
    }
    for (;;) {
      this.space();
      const name = JSON.parse(this.match(STRING)) as string;
      this.space();
      if (this.text[this.at++] !== ':') throw new LosslessSyntaxError();
      setMember(members, name, this.value());
      this.space();
      const char = this.text[this.at++];
      if (char === '}') return members;
      if (char !== ',') throw new LosslessSyntaxError();
    }
  }
}

/**
 * Sets an own member, `__proto__` included (an assignment would set the object's prototype); a
 * repeated name is the last one, as in `JSON.parse`.
 */
export function setMember(
  object: { [name: string]: LosslessValue },
  name: string,
  value: LosslessValue,
): void {
  if (name === '__proto__') {
    Object.defineProperty(object, name, { value, enumerable: true, writable: true, configurable: true });
  } else {
    // A repeated name moves to its last place, as JSON.parse's object has it in its first.
    object[name] = value;
  }
}

/**
 * Reads JSON text that was already validated, numbers kept as spelt. Throws when it is not JSON:
 * a bug of the caller.
 *
 * @example
 * stringifyLossless(parseLossless('{"a": 1.0, "b": [1e400]}')) // '{"a":1.0,"b":[1e400]}'
 */
export function parseLossless(text: string): LosslessValue {
  try {
    return new Reader(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).document();
  } catch (error) {
    if (error instanceof LosslessSyntaxError) throw new Error('parseLossless: the text is not JSON');
    throw error;
  }
}

/** Writes a value {@link parseLossless} read (changed or not) back as JSON text, without whitespace. */
export function stringifyLossless(value: LosslessValue): string {
  if (value === null) return 'null';
  if (value instanceof JsonNumber) return value.text;
  if (typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(stringifyLossless).join(',')}]`;
  const members: string[] = [];
  for (const name of Object.keys(value)) {
    members.push(`${JSON.stringify(name)}:${stringifyLossless(value[name] as LosslessValue)}`);
  }
  return `{${members.join(',')}}`;
}

/** A lossless JSON object (not an array, not null, not a number). */
export function isLosslessObject(value: unknown): value is { [name: string]: LosslessValue } {
  return (
    value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof JsonNumber)
  );
}

/** The integer a lossless value holds, if it is one (exactly, within the safe range). */
export function losslessInteger(value: LosslessValue | undefined): number | undefined {
  if (!(value instanceof JsonNumber)) return undefined;
  const number = Number(value.text);
  return Number.isSafeInteger(number) ? number : undefined;
}

/**
 * @module platform/bounded-text
 * How much supplied text an answer repeats. A caller can send a 3 MB host name or database name;
 * an error message repeats only enough of it to be recognised, and no message grows without bound.
 * (Log lines have their own bound: `logger.ts`.)
 */

/**
 * Longest piece of caller- or ERP-supplied text (a host, a name, a database) an error message
 * repeats: enough to recognise it, never the megabytes a caller can send.
 */
export const MAX_ECHOED_CHARS = 100;
/**
 * Longest error message answered. Messages repeat supplied text through {@link echoed}; this is
 * the backstop that keeps any message, whatever it repeats, bounded (the longest written ones
 * are a few hundred characters).
 */
export const MAX_ERROR_MESSAGE_CHARS = 2048;

/**
 * Supplied text as an error message may repeat it: its first `max` characters, then `…`.
 *
 * @example
 * `Target ${echoed(hostname)} refused: ...`
 */
export function echoed(text: string, max: number = MAX_ECHOED_CHARS): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** Format characters that reorder or hide text: zero-width, bidirectional marks and isolates, the BOM. */
function isFormatCharacter(code: number): boolean {
  return (
    (code >= 0x200b && code <= 0x200f) ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2060 && code <= 0x2069) ||
    code === 0xfeff
  );
}

/**
 * Supplied text as a record or a list keeps it: C0 and C1 controls, the line and paragraph
 * separators and the format characters that reorder or hide text removed, trimmed, at most `max`
 * characters; `undefined` when nothing is left.
 *
 * @example
 * printable(' Claude\n Desktop ') // 'Claude Desktop'
 */
export function printable(text: string, max: number = MAX_ECHOED_CHARS): string | undefined {
  let kept = '';
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029) continue;
    if (isFormatCharacter(code)) continue;
    kept += char;
  }
  const trimmed = kept.trim().slice(0, max);
  return trimmed === '' ? undefined : trimmed;
}

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

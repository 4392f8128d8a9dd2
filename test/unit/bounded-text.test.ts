/**
 * How much supplied text an error message repeats (`lambdas/platform/bounded-text.ts`), and the
 * bound every `ProxyError` message keeps.
 */
import { describe, expect, it } from 'vitest';
import { echoed, MAX_ECHOED_CHARS, MAX_ERROR_MESSAGE_CHARS } from '../../lambdas/platform/bounded-text.ts';
import { InvalidRequestError, UpstreamUnavailableError } from '../../lambdas/platform/errors.ts';

describe('echoed', () => {
  it('keeps short text and cuts long text to its first characters', () => {
    expect(echoed('erp.example.com')).toBe('erp.example.com');
    expect(echoed('h'.repeat(MAX_ECHOED_CHARS))).toBe('h'.repeat(MAX_ECHOED_CHARS));
    expect(echoed('h'.repeat(3_000_000))).toBe(`${'h'.repeat(MAX_ECHOED_CHARS)}…`);
  });
});

describe('ProxyError messages', () => {
  it('are bounded whatever they were built from', () => {
    const error = new UpstreamUnavailableError(`Cannot resolve ERP host ${'a'.repeat(3_000_000)} (DNS).`);
    expect(error.message.length).toBe(MAX_ERROR_MESSAGE_CHARS + 1);
    expect(error.message.startsWith('Cannot resolve ERP host aaa')).toBe(true);
    expect(new InvalidRequestError('Invalid request: id is required').message).toBe(
      'Invalid request: id is required',
    );
  });
});

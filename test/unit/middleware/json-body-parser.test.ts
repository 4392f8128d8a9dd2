/**
 * The body step parses with `@middy/http-json-body-parser` (the design card's parser; issue 34),
 * on a copy of the event: the event stays as API Gateway sent it, the package's content-type check
 * is off, and its 415 becomes the README's "not valid JSON (error at position N)".
 */
import { describe, expect, it, vi } from 'vitest';

const parsedBodies: unknown[] = [];
vi.mock('@middy/http-json-body-parser', async (importOriginal) => {
  const original = (await importOriginal()) as {
    default: (options?: unknown) => { before: (r: unknown) => unknown };
  };
  return {
    default: (options?: unknown) => {
      const parser = original.default(options);
      return {
        before: async (request: { event: { body: unknown } }) => {
          await parser.before(request);
          parsedBodies.push(request.event.body);
        },
      };
    },
  };
});

const { jsonBody } = await import('../../../lambdas/middleware/json-body.ts');

function event(body: string, contentType: string) {
  return { headers: { 'content-type': contentType }, body, isBase64Encoded: false } as never;
}

describe('jsonBody parses with @middy/http-json-body-parser', () => {
  it('gives the package the text and takes its value, whatever the content type; the event is left as sent', async () => {
    parsedBodies.length = 0;
    const sent = event('{"id":"a","params":[1.0]}', 'application/x-www-form-urlencoded');
    const { values } = await jsonBody().run(sent, { callerName: 'test', policy: undefined, licensed: true });
    expect(parsedBodies).toEqual([{ id: 'a', params: [1] }]);
    expect(values.body).toMatchObject({ ok: true, value: { id: 'a', params: [1] } });
    // Forwarded byte for byte: the member's text, not the parsed value.
    expect(values.body.ok && values.body.members.get('params')).toBe('[1.0]');
    expect((sent as { body: string }).body).toBe('{"id":"a","params":[1.0]}');
  });

  it("turns the package's refusal into the README's problem, with the position and without the text", async () => {
    parsedBodies.length = 0;
    const { values } = await jsonBody().run(event('{"api_key":"secret-value"', 'application/json'), {
      callerName: 'test',
      policy: undefined,
      licensed: true,
    });
    expect(parsedBodies).toEqual([]);
    expect(values.body).toEqual({
      ok: false,
      problem: 'the request body is not valid JSON (error at position 25)',
    });
  });
});

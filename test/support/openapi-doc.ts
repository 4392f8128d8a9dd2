/**
 * Reading `docs/openapi.json` as the tests do: the document as `npm run openapi` builds it, and
 * the local `$ref`s (`#/components/...`) it uses, followed to what they name.
 */
import { buildOpenApiDocument } from '../../bin/openapi.ts';

export type Json = Record<string, unknown>;

/** The document, as built now (the committed file is checked equal to it by openapi.test.ts). */
export const openApiDocument = buildOpenApiDocument();

/** Follows a local `$ref` of the document to what it names; any other value is returned as it is. */
export function deref<T>(value: unknown): T {
  const target = (value as { $ref?: string }).$ref;
  if (target === undefined) return value as T;
  return target
    .slice(2)
    .split('/')
    .reduce<unknown>((node, key) => (node as Json)[key], openApiDocument) as T;
}

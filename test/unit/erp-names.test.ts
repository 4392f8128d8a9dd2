/**
 * The one grammar of ERP names and the paths built from it (platform/erp-names.ts): a path is built
 * only from names of the grammar, each segment encoded; anything else is -32007 before it is sent.
 */
import { describe, expect, it } from 'vitest';
import { isMethodName, isModelName, MAX_NAME_LENGTH } from '../../lambdas/platform/erp-names.ts';
import { InvalidV2TargetError } from '../../lambdas/platform/errors.ts';
import { docBearerPath, json2Path } from '../../lambdas/upstream/erp-paths.ts';

describe('ERP names', () => {
  it('accepts model and method names as Odoo spells them', () => {
    expect(isModelName('res.partner')).toBe(true);
    expect(isModelName('x_custom.model_2')).toBe(true);
    expect(isMethodName('search_read')).toBe(true);
    expect(isMethodName('_private')).toBe(true);
  });

  it.each([
    'res.partner/write',
    'res.partner?x',
    'res.partner#x',
    'res.partner%2Fwrite',
    '../res.users',
    'res..partner',
    'res.partner.',
    ' res.partner',
    'res.partner\u0000',
    'res.partnér',
    '',
  ])('refuses the model name %j', (name) => {
    expect(isModelName(name)).toBe(false);
    expect(() => json2Path(name, 'read')).toThrow(InvalidV2TargetError);
    expect(() => docBearerPath(name)).toThrow(InvalidV2TargetError);
  });

  it.each(['read/../write', 'read?x', '1read', 'read.x', 'read ', ''])(
    'refuses the method name %j',
    (name) => {
      expect(isMethodName(name)).toBe(false);
      expect(() => json2Path('res.partner', name)).toThrow(InvalidV2TargetError);
    },
  );

  it('bounds a name at MAX_NAME_LENGTH characters', () => {
    expect(isModelName('a'.repeat(MAX_NAME_LENGTH))).toBe(true);
    expect(isModelName('a'.repeat(MAX_NAME_LENGTH + 1))).toBe(false);
    expect(isMethodName('a'.repeat(MAX_NAME_LENGTH + 1))).toBe(false);
  });

  it('builds the JSON-2 and documentation paths of checked names', () => {
    expect(json2Path('res.partner', 'search_read')).toBe('/json/2/res.partner/search_read');
    expect(docBearerPath('res.partner')).toBe('/doc-bearer/res.partner.json');
  });
});

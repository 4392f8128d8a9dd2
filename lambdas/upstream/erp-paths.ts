/**
 * @module upstream/erp-paths
 * The ERP paths the proxy builds from names: JSON-2's `/json/2/<model>/<method>` and the method
 * documentation's `/doc-bearer/<model>.json`, built only from names of the one grammar
 * (platform/erp-names.ts), each segment percent-encoded besides: a name off the grammar is -32007
 * here, whatever route brought it, before anything is sent (Odoo's server decodes escapes in a path,
 * and `?` would start a query string).
 */
import { isMethodName, isModelName } from '../platform/erp-names.ts';
import { InvalidV2TargetError } from '../platform/errors.ts';

/** `/` followed by each segment percent-encoded (a no-op for a name of the grammar; kept as a second fence). */
function pathOf(segments: readonly string[]): string {
  return segments.map((segment) => `/${encodeURIComponent(segment)}`).join('');
}

function refuseName(what: 'model' | 'method'): never {
  throw new InvalidV2TargetError(
    what === 'model'
      ? 'Invalid model name: expected an ERP model name such as res.partner (letters, digits, _ and single dots).'
      : 'Invalid method name: expected an ERP method name (letters, digits and _, not starting with a digit).',
  );
}

/**
 * The JSON-2 path of `model`'s `method`: `/json/2/<model>/<method>`, built only from names of the
 * grammar (-32007 otherwise, before anything is sent).
 *
 * @example
 * json2Path('res.partner', 'search_read') // '/json/2/res.partner/search_read'
 * json2Path('res.partner/write?', 'read') // throws InvalidV2TargetError (-32007)
 */
export function json2Path(model: string, method: string): string {
  if (!isModelName(model)) refuseName('model');
  if (!isMethodName(method)) refuseName('method');
  return pathOf(['json', '2', model, method]);
}

/** The path of `model`'s method documentation, `/doc-bearer/<model>.json` (-32007 for a name off the grammar). */
export function docBearerPath(model: string): string {
  if (!isModelName(model)) refuseName('model');
  return pathOf(['doc-bearer', `${model}.json`]);
}

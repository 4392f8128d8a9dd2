/**
 * Secrets the test suites use. Kept free of imports from the product code, so the leak guard
 * (a setup file loaded before every test file) does not load product modules early and spoil
 * a test file's `vi.mock`.
 */

/** The proxy key the harness configures (a test value, not a real secret). */
export const TEST_PROXY_KEY = 'test-proxy-key-0123456789abcdef';

/** Example ARNs of the two secrets (complete, with the 6-character suffix), for stacks and clients. */
export const EXAMPLE_KEYS_SECRET_ARN =
  'arn:aws:secretsmanager:eu-west-1:123456789012:secret:erp-proxy/keys-AbCdEf';
export const EXAMPLE_LICENSE_SECRET_ARN =
  'arn:aws:secretsmanager:eu-west-1:123456789012:secret:erp-proxy/license-GhIjKl';
/** Example ARN of the OAuth identity-map secret (README, "Remote agents with OAuth"). */
export const EXAMPLE_IDENTITIES_SECRET_ARN =
  'arn:aws:secretsmanager:eu-west-1:123456789012:secret:erp-proxy/oauth-identities-MnOpQr';

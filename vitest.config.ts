import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/live/**', 'node_modules/**'],
    environment: 'node',
    setupFiles: ['test/support/leak-guard.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Tests never reach AWS: keep the SDK and Powertools from looking for it.
    env: {
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_EC2_METADATA_DISABLED: 'true',
      POWERTOOLS_METRICS_NAMESPACE: 'ErpProxy',
      CDK_DISABLE_VERSION_CHECK: '1',
    },
  },
});

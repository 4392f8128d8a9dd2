import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

/** `npm run test:live`: the live suite only (skipped unless ERP_LIVE_* are set). */
export default defineConfig({
  test: {
    ...base.test,
    include: ['test/live/**/*.test.ts'],
    exclude: ['node_modules/**'],
    testTimeout: 60_000,
  },
});

/**
 * `npm run license -- keygen | issue | verify`: see `lambdas/operator/license-cli.ts`.
 */
import { runLicenseCli } from '../lambdas/operator/license-cli.ts';

process.exitCode = await runLicenseCli(process.argv.slice(2), process);

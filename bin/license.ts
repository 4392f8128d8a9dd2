/**
 * `npm run license -- keygen | issue | verify`: see `lambdas/license-cli.ts`.
 */
import { runLicenseCli } from '../lambdas/license-cli.ts';

process.exitCode = await runLicenseCli(process.argv.slice(2), process);

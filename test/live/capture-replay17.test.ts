/**
 * The real Odoo 17 captures (test/erp-double/captures/o17-*.json) replayed on the live Odoo 17
 * (`ERP_LIVE17_*`) and on the ERP double in its 17 mode: see capture-replay16-18.ts.
 */
import { describeCaptureReplay } from './capture-replay16-18.ts';
import { LIVE17 } from './live-env.ts';

describeCaptureReplay('17', LIVE17);

/**
 * The real Odoo 16 captures (test/erp-double/captures/o16-*.json) replayed on the live Odoo 16
 * (`ERP_LIVE16_*`) and on the ERP double in its 16 mode: see capture-replay16-18.ts.
 */
import { describeCaptureReplay } from './capture-replay16-18.ts';
import { LIVE16 } from './live-env.ts';

describeCaptureReplay('16', LIVE16);

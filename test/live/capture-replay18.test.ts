/**
 * The real Odoo 18 captures (test/erp-double/captures/o18-*.json) replayed on the live Odoo 18
 * (`ERP_LIVE18_*`) and on the ERP double in its 18 mode: see capture-replay16-18.ts.
 */
import { describeCaptureReplay } from './capture-replay16-18.ts';
import { LIVE18 } from './live-env.ts';

describeCaptureReplay('18', LIVE18);

/**
 * @module platform/package-info
 * Name, version and description of the proxy, from `package.json` (bundled by esbuild).
 */
import pkg from '../../package.json' with { type: 'json' };

export const PROXY_NAME: string = pkg.name;
export const PROXY_VERSION: string = pkg.version;
export const PROXY_DESCRIPTION: string = pkg.description;
/** Sent upstream as `User-Agent`. */
export const USER_AGENT = `${PROXY_NAME}/${PROXY_VERSION}`;

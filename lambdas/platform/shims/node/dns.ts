/**
 * `node:dns` in the function bundles (esbuild `alias`: lib/proxy-function.ts, NODE_BUILTIN_SHIMS,
 * says why): the names the bundles import, read from Node's own module object. A name not listed
 * fails the build, imported by name or read from the namespace.
 */
export const { ADDRCONFIG, lookup } = process.getBuiltinModule('node:dns');

// Written by scripts/versions.mjs from package.json at build time; do not edit.

/** The version of @sluice/audit. */
export const VERSION = '0.0.0';

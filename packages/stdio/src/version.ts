// Written by scripts/versions.mjs from package.json at build time; do not edit.

/** The version of @sluice/stdio. */
export const VERSION = '0.0.0';

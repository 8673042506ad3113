// Written by scripts/versions.mjs from package.json at build time; do not edit.

/** The version of @sluice/testing. */
export const VERSION = '0.1.0';

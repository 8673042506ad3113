#!/usr/bin/env node
import { main } from './main.js';

const code = await main(process.argv.slice(2));
process.exitCode = code;
// Whatever still holds the event loop open after a clean shutdown must not keep the process alive.
setTimeout(() => process.exit(code), 3_000).unref();

/**
 * The code that runs first in every sandbox, before the script. It receives
 * the host's three functions and the binding layout as arguments, so none of
 * them is ever a global the script could reach or replace, and it captures
 * `JSON` before the script can redefine it. It defines the globals a script
 * sees (`callTool`, `ToolError`, `console` and one object per server) and returns the function that runs the script.
 */
export const PRELUDE = String.raw`(function (hostCall, hostLog, hostDone, layout) {
  'use strict';
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const keys = Object.keys;
  const freeze = Object.freeze;
  const define = (name, value) =>
    Object.defineProperty(globalThis, name, { value, writable: false, enumerable: false, configurable: false });

  class ToolError extends Error {
    constructor(code, message, details) {
      super(message);
      this.name = 'ToolError';
      this.code = code;
      if (details && typeof details === 'object') {
        for (const key of keys(details)) if (!(key in this)) this[key] = details[key];
      }
    }
  }

  // The host answers a call through settle(), which the script cannot reach, with its number in the reply.
  const waiting = new Map();
  const settle = (json) => {
    const reply = parse(json);
    const resolve = waiting.get(reply.id);
    waiting.delete(reply.id);
    if (resolve) resolve(reply);
  };

  async function callTool(name, args) {
    if (typeof name !== 'string') throw new TypeError('callTool(name, args): name must be a string');
    // One string crosses to the host: the name, a newline, the arguments as JSON.
    const id = hostCall(name + '\n' + (args === undefined ? '{}' : stringify(args) ?? 'null'));
    const reply = await new Promise((resolve) => waiting.set(id, resolve));
    if (reply.ok) return reply.value;
    throw new ToolError(reply.code, reply.message, reply.details);
  }

  const servers = {};
  for (const server of keys(layout)) {
    const functions = {};
    for (const fn of keys(layout[server])) {
      const tool = layout[server][fn];
      functions[fn] = (args) => callTool(tool, args);
    }
    servers[server] = freeze(functions);
    define(server, servers[server]);
  }

  const format = (value) => {
    if (typeof value === 'string') return value;
    try {
      const text = stringify(value);
      return text === undefined ? String(value) : text;
    } catch {
      return String(value);
    }
  };
  const log = (...values) => hostLog(values.map(format).join(' '));
  define('console', freeze({ log, info: log, warn: log, error: log, debug: log }));
  define('callTool', callTool);
  define('ToolError', ToolError);

  const describe = (error) => {
    if (error instanceof Error) {
      const out = { name: String(error.name), message: String(error.message) };
      if (typeof error.code === 'string') out.code = error.code;
      if (typeof error.stack === 'string') out.stack = error.stack;
      return out;
    }
    return { name: 'Thrown', message: format(error) };
  };
  const fail = (error) => {
    let text;
    try {
      text = stringify(describe(error));
    } catch {
      text = '{"name":"Error","message":"the script threw something that cannot be described"}';
    }
    hostDone(false, text);
  };
  const succeed = (value) => {
    let text;
    try {
      text = stringify(value === undefined ? null : value);
    } catch (error) {
      return fail(new TypeError('the script returned a value that is not JSON: ' + format(error && error.message)));
    }
    hostDone(true, text === undefined ? 'null' : text);
  };

  const run = (script) => {
    let running;
    try {
      running = script();
    } catch (error) {
      return fail(error);
    }
    Promise.resolve(running).then(succeed, fail);
  };
  return [run, settle];
})`;

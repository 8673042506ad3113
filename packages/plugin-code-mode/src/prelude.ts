/**
 * The code that runs first in every sandbox, before the script. It receives
 * the host's three functions, the binding layout and the call limit as
 * arguments, so none of them is ever a global the script could reach or
 * replace, and it captures `JSON`, `Promise` and `Object.create` before the
 * script can redefine them. It defines the globals a script sees (`callTool`,
 * `ToolError`, `console` and one object per server) and returns the function
 * that runs the script, the one that answers calls and the one that hands the
 * host the calls made since it last asked.
 *
 * A call crosses no host function: it is appended to an outbox string (its
 * number, the lengths of its name and arguments, a newline, the name, the
 * arguments as JSON) that the host drains after each run of pending jobs, so
 * that the calls a script makes in one turn leave together.
 */
export const PRELUDE = String.raw`(function (hostLog, hostDone, hostOverLimit, layout, maxCalls) {
  'use strict';
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const keys = Object.keys;
  const freeze = Object.freeze;
  const OwnPromise = Promise;
  const rejected = (error) => new OwnPromise((resolve, reject) => reject(error));
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

  // The host answers calls through settle(), which the script cannot reach: a JSON array of numbered replies.
  const pending = Object.create(null);
  let nextId = 0;
  let outbox = '';
  const settle = (json) => {
    const replies = parse(json);
    for (let i = 0; i < replies.length; i++) {
      const reply = replies[i];
      const waiter = pending[reply.id];
      if (waiter === undefined) continue;
      delete pending[reply.id];
      if (reply.ok) waiter.resolve(reply.value);
      else waiter.reject(new ToolError(reply.code, reply.message, reply.details));
    }
  };
  const drain = () => {
    const calls = outbox;
    outbox = '';
    return calls;
  };

  function callTool(name, args) {
    if (typeof name !== 'string') return rejected(new TypeError('callTool(name, args): name must be a string'));
    let json;
    try {
      json = args === undefined ? '{}' : stringify(args);
    } catch (error) {
      return rejected(error);
    }
    if (json === undefined) json = 'null';
    const id = nextId++;
    outbox += id + ' ' + name.length + ' ' + json.length + '\n' + name + json;
    // The host counts the calls too; this stops a script that never yields at the call past the limit.
    if (nextId === maxCalls + 1) hostOverLimit();
    return new OwnPromise((resolve, reject) => {
      pending[id] = { resolve, reject };
    });
  }

  const servers = {};
  for (const server of keys(layout)) {
    const functions = {};
    for (const fn of keys(layout[server])) {
      const tool = layout[server][fn];
      functions[fn] = (args) => callTool(tool, args);
      // tools.search(query, limit): the server's tool search, answering with its list of matches.
      // resources.read(uri) and prompts.get(name, args): the caller's own reads and gets, through every guard.
      if (server === 'resources' && fn === 'read') functions[fn] = (uri) => callTool(tool, { uri });
      if (server === 'prompts' && fn === 'get')
        functions[fn] = (name, args) => callTool(tool, args === undefined ? { name } : { name, arguments: args });
      if (server === 'tools' && fn === 'search') {
        functions[fn] = (query, limit) =>
          callTool(tool, limit === undefined ? { query } : { query, limit }).then((found) =>
            found !== null && typeof found === 'object' && found.tools !== undefined ? found.tools : found,
          );
      }
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
  // Once the host has cut the output, lines are neither formatted nor sent.
  let logging = true;
  const log = (...values) => {
    if (logging && hostLog(values.map(format).join(' ')) === false) logging = false;
  };
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
  return [run, settle, drain];
})`;

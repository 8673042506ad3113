// Imported, not the global: the global is a lazy getter, and the hot paths read the clock several times a call.
import { performance } from 'node:perf_hooks';
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten-core';
import type { QuickJSWASMModule } from 'quickjs-emscripten-core';
import { CodeModeErrorCode } from './errors.js';
import type { SandboxLimits } from './options.js';
import { PRELUDE } from './prelude.js';

/** The most bytes of a failed script's error description read (its name, message and stack). */
const FAILURE_DESCRIPTION_BYTES = 1 << 20;
/** What a script's tool call answers inside the sandbox: a value, or the parts of a `ToolError`. */
export type CallReply =
  | { readonly ok: true; readonly value: unknown }
  | {
      readonly ok: false;
      readonly code: string;
      readonly message: string;
      readonly details?: Readonly<Record<string, unknown>>;
    };

/** What the host does for a script. */
export interface ScriptHost {
  /**
   * Runs calls of the script: `calls` is a JSON array of `[id, tool, arguments]`
   * (the arguments a JSON object), the calls one turn of the script made that
   * found a free slot. The host answers them through `ScriptRun.deliver()`.
   */
  send(calls: string): void;
}

/**
 * The JSON text of a call's reply as the sandbox hands it to the script: a
 * reply larger than a quarter of the script's heap becomes `OUTPUT_TOO_LARGE`
 * (the script could not hold it).
 */
export function replyText(reply: CallReply, limits: Pick<SandboxLimits, 'memoryBytes'>): string {
  const limit = Math.floor(limits.memoryBytes / 4);
  let text: string;
  try {
    text = JSON.stringify(reply);
  } catch {
    return JSON.stringify({
      ok: false,
      code: 'TOOL_ERROR',
      message: 'The tool answered a value that is not JSON.',
    } satisfies CallReply);
  }
  if (text.length <= limit) return text;
  return JSON.stringify({
    ok: false,
    code: CodeModeErrorCode.OUTPUT_TOO_LARGE,
    message: `The tool's result (${text.length} characters) is more than a script may hold (${limit}).`,
  } satisfies CallReply);
}

/** Why a script stopped without a result. */
export interface ScriptFailure {
  readonly code: CodeModeErrorCode;
  readonly message: string;
}

/** How a script ended, with its console output and the CPU time its own code took. */
export type ScriptOutcome = (
  { readonly ok: true; readonly value: unknown } | ({ readonly ok: false } & ScriptFailure)
) & { readonly logs: readonly string[]; readonly cpuMs: number };

type Ending = { readonly ok: true; readonly value: unknown } | ({ readonly ok: false } & ScriptFailure);

/** A script to run, with the tools it may call. */
export interface ScriptInput {
  readonly source: string;
  /** Server identifier -> function identifier -> the exposed tool name it calls. */
  readonly layout: Readonly<Record<string, Readonly<Record<string, string>>>>;
  readonly limits: SandboxLimits;
  readonly host: ScriptHost;
  /** The caller's cancellation. */
  readonly signal: AbortSignal;
  /**
   * Called when the WebAssembly module faulted while the run was torn down
   * (QuickJS aborts when a runtime it frees still holds objects, as after a
   * stack overflow inside an async function): the module must not run again.
   */
  readonly onFault: (error: unknown) => void;
  /**
   * Called at each interrupt check while the script's code runs: may block the
   * thread to slow the script to its caller's CPU share, and answers the ms it
   * blocked, which are not the script's CPU time.
   */
  readonly pause?: () => number;
}

const SCRIPT_FILE = 'script.js';
// The script is wrapped so that top-level `await` and `return` work; one line, so its line numbers stay.
const WRAP_START = '(async () => {';
const WRAP_END = '\n})';
const IMPORT_REFUSED =
  'Scripts cannot import modules: every tool is already bound (see the files of list_tool_files), and nothing else is reachable.';

/** Runs one script in a fresh QuickJS runtime of `engine`, within `limits`; `done` settles when it ends. */
export function runScript(engine: QuickJSWASMModule, input: ScriptInput): ScriptRun {
  const run = new ScriptRun(engine, input);
  run.done = run.start();
  return run;
}

/** A call the script made, waiting for a free slot: its number, the tool's name and its arguments, as JSON. */
interface QueuedCall {
  readonly id: number;
  readonly tool: string;
  readonly args: string;
}

export class ScriptRun {
  /** How the script ended; set by `runScript()`. */
  done!: Promise<ScriptOutcome>;
  private readonly runtime: QuickJSRuntime;
  private readonly vm: QuickJSContext;
  private readonly memory: GrowableMemory;
  private readonly limits: SandboxLimits;
  /** The tools bound for the script, each with its name as JSON (as calls carry it to the host). */
  private readonly allowed: ReadonlyMap<string, string>;
  /** The prelude's functions that answer calls and hand over the outbox; alive until the run is disposed. */
  private settleCalls: QuickJSHandle | undefined;
  private drainCalls: QuickJSHandle | undefined;
  private readonly logs: string[] = [];
  /** Calls waiting for a slot, oldest first, from `queuedAt` on. */
  private readonly queued: QueuedCall[] = [];
  private queuedAt = 0;
  /** Replies the sandbox gives itself (a call refused before reaching the host), as numbered JSON objects. */
  private localReplies: string[] = [];
  private readonly deadline: number;
  private logBytes = 0;
  private logsCut = false;
  private cpuUsed = 0;
  private sliceStart = 0;
  private callCount = 0;
  private active = 0;
  private outcome: ScriptOutcome | undefined;
  private settle: (outcome: ScriptOutcome) => void = () => {};
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** A host exception out of the module: it is not used again, not even to free this run. */
  private fault: unknown;
  /**
   * The module's memory grew while pending jobs ran: the binding's job runner
   * then reads its out-parameter through a stale view and leaves a stray
   * context in the runtime, which freeing the runtime would abort on. The
   * engine gives each module a memory that cannot grow; should one grow all
   * the same, the module is dropped instead of freeing the runtime.
   */
  private strayContext = false;

  constructor(
    engine: QuickJSWASMModule,
    private readonly input: ScriptInput,
  ) {
    this.limits = input.limits;
    this.allowed = new Map(
      Object.values(input.layout).flatMap((fns) => Object.values(fns).map((tool) => [tool, JSON.stringify(tool)])),
    );
    this.deadline = performance.now() + this.limits.timeoutMs;
    this.memory = memoryOf(engine);
    this.runtime = engine.newRuntime();
    this.runtime.setMemoryLimit(this.limits.memoryBytes);
    this.runtime.setMaxStackSize(this.limits.stackBytes);
    this.runtime.setInterruptHandler(() => this.shouldInterrupt());
    this.runtime.setModuleLoader(() => ({ error: new Error(IMPORT_REFUSED) }));
    this.vm = this.runtime.newContext();
  }

  async start(): Promise<ScriptOutcome> {
    const done = new Promise<ScriptOutcome>((resolve) => (this.settle = resolve));
    const onAbort = () => this.fail(CodeModeErrorCode.CANCELLED, 'The caller cancelled the script.');
    this.input.signal.addEventListener('abort', onAbort, { once: true });
    this.timer = setTimeout(() => this.expire(), this.limits.timeoutMs);
    try {
      if (this.input.signal.aborted) onAbort();
      else this.guarded(() => this.boot());
      return await done;
    } finally {
      this.input.signal.removeEventListener('abort', onAbort);
      clearTimeout(this.timer);
      this.dispose();
    }
  }

  /**
   * Hands the script the host's replies to `count` of its calls (a JSON array
   * of numbered replies, each as `replyText()` writes it) and runs what they unblock.
   */
  deliver(replies: string, count: number): void {
    this.active -= count;
    this.answer(replies);
  }

  /** Evaluates the prelude and the script, and runs the jobs they queue. */
  private boot(): void {
    const vm = this.vm;
    const handles: QuickJSHandle[] = [];
    const own = (h: QuickJSHandle): QuickJSHandle => (handles.push(h), h);
    try {
      const prelude = this.slice(() => vm.evalCode(PRELUDE, 'prelude.js'));
      if (prelude.error) {
        this.failWith(own(prelude.error));
        return;
      }
      const setup = own(prelude.value);
      // Parsed inside, so that no key of the layout can act as `__proto__` in a literal.
      const parsed = this.slice(() => vm.evalCode(`JSON.parse(${JSON.stringify(JSON.stringify(this.input.layout))})`));
      if (parsed.error) {
        this.failWith(own(parsed.error));
        return;
      }
      const functions = this.slice(() =>
        vm.callFunction(
          setup,
          vm.undefined,
          own(vm.newFunction('hostLog', (text) => this.hostLog(text))),
          own(vm.newFunction('hostDone', (ok, json) => this.hostDone(ok, json))),
          own(vm.newFunction('hostOverLimit', () => this.overLimit())),
          own(parsed.value),
          own(vm.newNumber(this.limits.maxToolCalls)),
        ),
      );
      if (functions.error) {
        this.failWith(own(functions.error));
        return;
      }
      own(functions.value);
      const run = own(vm.getProp(functions.value, 0));
      this.settleCalls = vm.getProp(functions.value, 1);
      this.drainCalls = vm.getProp(functions.value, 2);
      const script = this.slice(() =>
        vm.evalCode(`${WRAP_START}${this.input.source}${WRAP_END}`, SCRIPT_FILE, { strict: true }),
      );
      if (script.error) {
        this.failWith(own(script.error));
        return;
      }
      own(script.value);
      const started = this.slice(() => vm.callFunction(run, vm.undefined, script.value));
      if (started.error) {
        this.failWith(own(started.error));
        return;
      }
      own(started.value);
    } finally {
      for (const h of handles) if (h.alive) h.dispose();
    }
    this.pump();
  }

  /**
   * Runs the jobs the script queued (promise reactions), counting the time as
   * the script's CPU, then takes the calls they made.
   */
  private pump(): void {
    if (this.outcome) return;
    this.guarded(() => {
      const buffer = this.memory.buffer;
      const result = this.slice(() => this.runtime.executePendingJobs());
      if (this.memory.buffer !== buffer) this.strayContext = true;
      if (result.error) this.failWith(result.error);
      else this.takeCalls();
    });
  }

  /** Takes the calls the script made since the last time from its outbox: counted, checked, queued for a slot. */
  private takeCalls(): void {
    if (this.outcome || this.drainCalls === undefined) return;
    const drain = this.drainCalls;
    const drained = this.slice(() => this.vm.callFunction(drain, this.vm.undefined));
    if (drained.error) {
      this.failWith(drained.error);
      return;
    }
    const outbox = this.vm.getString(drained.value);
    drained.value.dispose();
    const maxArgs = this.limits.maxOutputBytes * 4;
    let at = 0;
    while (at < outbox.length) {
      const record = readRecord(outbox, at);
      if (!record) {
        // Only the prelude writes the outbox; a record it did not write means the sandbox is not what it was.
        this.fail(CodeModeErrorCode.SCRIPT_ERROR, 'The sandbox failed while running the script.');
        return;
      }
      at = record.end;
      if (++this.callCount > this.limits.maxToolCalls) {
        this.overLimit();
        return;
      }
      const { id, tool, args } = record;
      if (tool.length > 256 || !this.allowed.has(tool)) {
        this.answerLocally(id, {
          ok: false,
          code: CodeModeErrorCode.TOOL_NOT_AVAILABLE,
          message: `No tool named ${JSON.stringify(tool.slice(0, 256))} is bound for this script.`,
        });
      } else if (args.length > maxArgs || !isJsonObject(args)) {
        this.answerLocally(id, {
          ok: false,
          code: CodeModeErrorCode.INVALID_ARGUMENTS,
          message: `The arguments of ${tool} must be a JSON object (at most ${maxArgs} bytes).`,
        });
      } else {
        this.queued.push({ id, tool: this.allowed.get(tool) ?? JSON.stringify(tool), args });
      }
    }
    this.sendQueued();
  }

  /** Sends the host the queued calls that fit in the free slots, in one message. */
  private sendQueued(): void {
    if (this.outcome) return;
    let batch = '';
    while (this.active < this.limits.maxConcurrentCalls) {
      const call = this.queued[this.queuedAt];
      if (call === undefined) break;
      this.queuedAt++;
      this.active++;
      batch += `${batch ? ',' : '['}[${call.id},${call.tool},${call.args}]`;
    }
    if (this.queuedAt === this.queued.length) {
      this.queued.length = 0;
      this.queuedAt = 0;
    }
    if (batch) this.input.host.send(`${batch}]`);
  }

  private overLimit(): void {
    this.fail(
      CodeModeErrorCode.TOOL_CALL_LIMIT,
      `The script made more than ${this.limits.maxToolCalls} tool calls; it was stopped.`,
    );
  }

  /** Answers a call the sandbox refuses itself, with the others refused in the same turn, at the next `flushLocal()`. */
  private answerLocally(id: number, reply: CallReply): void {
    this.localReplies.push(numbered(id, replyText(reply, this.limits)));
  }

  /** Hands the script the replies the sandbox gave itself since the last time, and runs what they unblock. */
  flushLocal(): void {
    while (this.localReplies.length > 0 && !this.outcome) {
      const replies = this.localReplies;
      this.localReplies = [];
      this.answer(`[${replies.join(',')}]`);
    }
  }

  /** Whether replies the sandbox gave itself wait for `flushLocal()`. */
  hasLocalReplies(): boolean {
    return this.localReplies.length > 0;
  }

  /**
   * Whether the script can never go on: it has not ended, and no call of it
   * is running, queued or answered but not yet handed over, so nothing can
   * settle what it awaits (a promise that never settles). Its slot would be
   * held for nothing until its wall time.
   */
  isStalled(): boolean {
    return (
      this.outcome === undefined &&
      this.active === 0 &&
      this.queuedAt >= this.queued.length &&
      this.localReplies.length === 0
    );
  }

  /** Ends a stalled script (see `isStalled`). */
  stall(): void {
    this.fail(
      CodeModeErrorCode.SCRIPT_STALLED,
      'The script awaits something that can never settle (no tool call of it is running); it was stopped.',
    );
  }

  /** Whether the script has ended (its outcome is set; `done` settles soon after). */
  isFinished(): boolean {
    return this.outcome !== undefined;
  }

  /** Milliseconds left before the script's wall time; at or below zero, `expire()` ends it. */
  msLeft(): number {
    return this.deadline - performance.now();
  }

  /** Ends the script at its wall time (for a host that waits for replies without its event loop). */
  expire(): void {
    this.fail(CodeModeErrorCode.SCRIPT_TIMEOUT, `The script ran past its ${this.limits.timeoutMs} ms.`);
  }

  /**
   * Runs work that enters the module. A host exception out of it (the host's
   * own stack exhausted by deep recursion inside the module, or a trap) leaves
   * the module in an unknown state: the script stops and the module is dropped.
   */
  private guarded(work: () => void): void {
    try {
      work();
    } catch (error) {
      this.fault ??= error;
      const exhausted = error instanceof RangeError;
      this.fail(
        exhausted ? CodeModeErrorCode.MEMORY_LIMIT : CodeModeErrorCode.SCRIPT_ERROR,
        exhausted
          ? 'The script nested calls too deeply (stack overflow).'
          : 'The sandbox failed while running the script.',
      );
    }
  }

  /** Runs host-to-sandbox work, counting the time spent as the script's CPU time. */
  private slice<T>(work: () => T): T {
    this.sliceStart = performance.now();
    try {
      return work();
    } finally {
      this.cpuUsed += performance.now() - this.sliceStart;
      this.sliceStart = 0;
    }
  }

  private shouldInterrupt(): boolean {
    if (this.outcome) return true;
    // Only while the script's own code runs; the time it was held back is not its CPU time.
    const paused = this.sliceStart !== 0 ? (this.input.pause?.() ?? 0) : 0;
    if (paused > 0) {
      this.sliceStart += paused;
      // A cancellation heard meanwhile ends it.
      if (this.isFinished()) return true;
    }
    const now = performance.now();
    if (this.cpuUsed + (now - this.sliceStart) > this.limits.cpuMs) {
      this.fail(CodeModeErrorCode.CPU_LIMIT, `The script's own code ran past its ${this.limits.cpuMs} ms of CPU time.`);
      return true;
    }
    if (now > this.deadline) {
      this.expire();
      return true;
    }
    return false;
  }

  /** Hands replies (a JSON array of numbered replies) to the script, then runs what they unblock and sends what fits. */
  private answer(replies: string): void {
    if (this.outcome || this.settleCalls === undefined) return;
    const settle = this.settleCalls;
    this.guarded(() => {
      const json = this.vm.newString(replies);
      const settled = this.slice(() => this.vm.callFunction(settle, this.vm.undefined, json));
      json.dispose();
      if (settled.error) this.failWith(settled.error);
      else settled.value.dispose();
    });
    this.pump();
    // Slots freed by these replies go to calls queued before them.
    this.sendQueued();
  }

  /** One line of console output; answers `false` once the output is cut, so the script stops sending more. */
  private hostLog(textHandle: QuickJSHandle): QuickJSHandle | undefined {
    if (this.logsCut) return this.vm.false;
    const room = this.limits.maxOutputBytes - this.logBytes;
    const text = this.readString(textHandle, room);
    if (text === undefined) {
      this.logsCut = true;
      this.logs.push(`[console output cut at ${this.limits.maxOutputBytes} bytes]`);
      return this.vm.false;
    }
    this.logBytes += Buffer.byteLength(text) + 1;
    this.logs.push(text);
    return undefined;
  }

  private hostDone(okHandle: QuickJSHandle, jsonHandle: QuickJSHandle): void {
    if (this.outcome) return;
    const ok = this.vm.typeof(okHandle) === 'boolean' && this.vm.dump(okHandle) === true;
    // A failure is classified before it is formatted: its description (a stack overflow's trace is tens of
    // KB) is not the script's output, so maxOutputBytes does not apply to it; its own bound does.
    const json = this.readString(jsonHandle, ok ? this.limits.maxOutputBytes : FAILURE_DESCRIPTION_BYTES);
    if (json === undefined && !ok) {
      this.fail(CodeModeErrorCode.SCRIPT_ERROR, 'The script failed with an error too large to describe.');
      return;
    }
    if (json === undefined) {
      this.fail(
        CodeModeErrorCode.OUTPUT_TOO_LARGE,
        `The script's result is larger than ${this.limits.maxOutputBytes} bytes: return less (a summary, or a page).`,
      );
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch {
      this.fail(CodeModeErrorCode.SCRIPT_ERROR, 'The script returned a value that is not JSON.');
      return;
    }
    if (ok) this.finish({ ok: true, value });
    else this.failWithDescription(value);
  }

  /** A string argument of at most `max` characters (and so bytes, within a factor the limits allow for), or undefined. */
  private readString(handle: QuickJSHandle, max: number): string | undefined {
    if (this.vm.typeof(handle) !== 'string') return undefined;
    const lengthHandle = this.vm.getProp(handle, 'length');
    const length = this.vm.getNumber(lengthHandle);
    lengthHandle.dispose();
    if (length > max) return undefined;
    const text = this.vm.getString(handle);
    return Buffer.byteLength(text) > max ? undefined : text;
  }

  /** Fails with what an error handle from the sandbox says; disposes it. */
  private failWith(errorHandle: QuickJSHandle): void {
    const error: unknown = this.vm.dump(errorHandle);
    errorHandle.dispose();
    this.failWithDescription(error);
  }

  private failWithDescription(error: unknown): void {
    if (this.outcome) return;
    const { name, message, stack } = describeError(error);
    if (/out of memory/i.test(message) || /stack overflow/i.test(message)) {
      this.fail(
        CodeModeErrorCode.MEMORY_LIMIT,
        `The script ran out of memory (${name}: ${message}); its heap is ${this.limits.memoryBytes} bytes.`,
      );
      return;
    }
    const where = stack ? firstScriptFrame(stack) : undefined;
    this.fail(CodeModeErrorCode.SCRIPT_ERROR, `${name}: ${message}${where ? ` (${where})` : ''}`);
  }

  private fail(code: CodeModeErrorCode, message: string): void {
    this.finish({ ok: false, code, message });
  }

  private finish(ending: Ending): void {
    if (this.outcome) return;
    this.outcome = {
      ...ending,
      logs: this.logs,
      cpuMs: this.cpuUsed + (this.sliceStart ? performance.now() - this.sliceStart : 0),
    };
    this.settle(this.outcome);
  }

  private dispose(): void {
    if (this.fault !== undefined) {
      this.input.onFault(this.fault);
      return;
    }
    if (this.strayContext) {
      this.input.onFault(new Error('The sandbox memory grew while pending jobs ran; the module is replaced.'));
      return;
    }
    try {
      for (const handle of [this.settleCalls, this.drainCalls]) if (handle?.alive) handle.dispose();
      this.vm.dispose();
      this.runtime.dispose();
    } catch (error) {
      // The script's outcome stands; only the module is lost.
      this.input.onFault(error);
    }
  }
}

/** What a run watches of the module's WebAssembly memory: its buffer is replaced when the memory grows. */
interface GrowableMemory {
  readonly buffer: ArrayBufferLike;
}

// The binding types the memory with the DOM's WebAssembly types, which this build does not load.
const memoryOf = (engine: QuickJSWASMModule): GrowableMemory =>
  (engine as unknown as { getWasmMemory(): GrowableMemory }).getWasmMemory();

/** A reply's JSON object with the call's number first. */
function numbered(id: number, replyJson: string): string {
  return `{"id":${id},${replyJson.slice(1)}`;
}

/** One record of the prelude's outbox at `at`: `<id> <name length> <arguments length>\n<name><arguments>`. */
const RECORD_HEADER = /(\d{1,15}) (\d{1,15}) (\d{1,15})\n/y;

/** One record of the prelude's outbox at `at`: `<id> <name length> <arguments length>\n<name><arguments>`. */
function readRecord(outbox: string, at: number): (QueuedCall & { readonly end: number }) | undefined {
  RECORD_HEADER.lastIndex = at;
  const header = RECORD_HEADER.exec(outbox);
  if (!header) return undefined;
  const nameStart = RECORD_HEADER.lastIndex;
  const nameEnd = nameStart + Number(header[2]);
  const end = nameEnd + Number(header[3]);
  if (end > outbox.length) return undefined;
  return { id: Number(header[1]), tool: outbox.slice(nameStart, nameEnd), args: outbox.slice(nameEnd, end), end };
}

function isJsonObject(text: string): boolean {
  if (text === '{}') return true;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

function describeError(error: unknown): { name: string; message: string; stack?: string } {
  if (typeof error === 'object' && error !== null) {
    const e = error as { name?: unknown; message?: unknown; stack?: unknown };
    return {
      name: typeof e.name === 'string' ? e.name.slice(0, 100) : 'Error',
      message:
        typeof e.message === 'string' ? e.message.slice(0, 2_000) : 'the script threw a value that is not an Error',
      ...(typeof e.stack === 'string' ? { stack: e.stack.slice(0, 2_000) } : {}),
    };
  }
  return { name: 'Error', message: String(error).slice(0, 2_000) };
}

/** `script.js:3:5` from a QuickJS stack, the line counted in the script as written. */
function firstScriptFrame(stack: string): string | undefined {
  const match = new RegExp(`${SCRIPT_FILE.replace('.', '\\.')}:(\\d+)(?::(\\d+))?`).exec(stack);
  if (!match) return undefined;
  return `line ${match[1]}${match[2] ? `, column ${match[2]}` : ''}`;
}

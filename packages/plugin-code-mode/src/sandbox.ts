import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten-core';
import type { QuickJSWASMModule } from 'quickjs-emscripten-core';
import { CodeModeErrorCode } from './errors.js';
import type { SandboxLimits } from './options.js';
import { PRELUDE } from './prelude.js';

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
  /** Runs one tool call of the script; never rejects. */
  call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallReply>;
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
}

const SCRIPT_FILE = 'script.js';
// The script is wrapped so that top-level `await` and `return` work; one line, so its line numbers stay.
const WRAP_START = '(async () => {';
const WRAP_END = '\n})';
const IMPORT_REFUSED =
  'Scripts cannot import modules: every tool is already bound (see the files of list_tool_files), and nothing else is reachable.';

/** Runs one script in a fresh QuickJS runtime of `engine`, within `limits`. */
export function runScript(engine: QuickJSWASMModule, input: ScriptInput): Promise<ScriptOutcome> {
  return new ScriptRun(engine, input).start();
}

class ScriptRun {
  private readonly runtime: QuickJSRuntime;
  private readonly vm: QuickJSContext;
  private readonly limits: SandboxLimits;
  private readonly allowed: ReadonlySet<string>;
  /** The prelude's function that answers a call by its number; alive until the run is disposed. */
  private settleCall: QuickJSHandle | undefined;
  private nextCallId = 0;
  private readonly calls = new AbortController();
  private readonly logs: string[] = [];
  private readonly waiting: (() => void)[] = [];
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

  constructor(
    engine: QuickJSWASMModule,
    private readonly input: ScriptInput,
  ) {
    this.limits = input.limits;
    this.allowed = new Set(Object.values(input.layout).flatMap((fns) => Object.values(fns)));
    this.deadline = performance.now() + this.limits.timeoutMs;
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
    this.timer = setTimeout(
      () => this.fail(CodeModeErrorCode.SCRIPT_TIMEOUT, `The script ran past its ${this.limits.timeoutMs} ms.`),
      this.limits.timeoutMs,
    );
    try {
      if (this.input.signal.aborted) onAbort();
      else this.guarded(() => this.boot());
      return await done;
    } finally {
      this.input.signal.removeEventListener('abort', onAbort);
      clearTimeout(this.timer);
      this.calls.abort();
      this.dispose();
    }
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
          own(vm.newFunction('hostCall', (request) => this.hostCall(request))),
          own(vm.newFunction('hostLog', (text) => this.hostLog(text))),
          own(vm.newFunction('hostDone', (ok, json) => this.hostDone(ok, json))),
          own(parsed.value),
        ),
      );
      if (functions.error) {
        this.failWith(own(functions.error));
        return;
      }
      own(functions.value);
      const run = own(vm.getProp(functions.value, 0));
      this.settleCall = vm.getProp(functions.value, 1);
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

  /** Runs the jobs the script queued (promise reactions), counting the time as the script's CPU. */
  private pump(): void {
    if (this.outcome) return;
    this.guarded(() => {
      const result = this.slice(() => this.runtime.executePendingJobs());
      if (result.error) this.failWith(result.error);
    });
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
    const now = performance.now();
    if (this.cpuUsed + (now - this.sliceStart) > this.limits.cpuMs) {
      this.fail(CodeModeErrorCode.CPU_LIMIT, `The script's own code ran past its ${this.limits.cpuMs} ms of CPU time.`);
      return true;
    }
    if (now > this.deadline) {
      this.fail(CodeModeErrorCode.SCRIPT_TIMEOUT, `The script ran past its ${this.limits.timeoutMs} ms.`);
      return true;
    }
    return false;
  }

  /** One tool call from the script: counted, checked, queued for a slot, then run by the host; returns its number. */
  private hostCall(requestHandle: QuickJSHandle): QuickJSHandle {
    const id = this.nextCallId++;
    const answer = (reply: CallReply) => this.answer(id, reply);
    if (++this.callCount > this.limits.maxToolCalls) {
      this.fail(
        CodeModeErrorCode.TOOL_CALL_LIMIT,
        `The script made more than ${this.limits.maxToolCalls} tool calls; it was stopped.`,
      );
      return this.vm.newNumber(id);
    }
    const request = this.readString(requestHandle, 257 + this.limits.maxOutputBytes * 4);
    const cut = request?.indexOf('\n') ?? -1;
    const tool = cut < 0 || cut > 256 ? undefined : request?.slice(0, cut);
    const parsedArgs = tool === undefined ? undefined : parseObject(request?.slice(cut + 1) ?? '');
    if (tool === undefined || !this.allowed.has(tool)) {
      queueMicrotask(() =>
        answer({
          ok: false,
          code: CodeModeErrorCode.TOOL_NOT_AVAILABLE,
          message: `No tool named ${JSON.stringify(tool ?? '')} is bound for this script.`,
        }),
      );
    } else if (parsedArgs === undefined) {
      queueMicrotask(() =>
        answer({
          ok: false,
          code: CodeModeErrorCode.INVALID_ARGUMENTS,
          message: `The arguments of ${tool} must be a JSON object (at most ${this.limits.maxOutputBytes * 4} bytes).`,
        }),
      );
    } else {
      void this.whenSlotFree().then(async () => {
        if (this.outcome) return;
        try {
          answer(await this.input.host.call(tool, parsedArgs, this.calls.signal));
        } finally {
          this.releaseSlot();
        }
      });
    }
    return this.vm.newNumber(id);
  }

  /** Hands a call's reply to the script and runs what it unblocks. */
  private answer(id: number, reply: CallReply): void {
    if (this.outcome || this.settleCall === undefined) return;
    const settle = this.settleCall;
    const text = JSON.stringify({ id, ...reply });
    const limit = Math.floor(this.limits.memoryBytes / 4);
    const fitted =
      text.length > limit
        ? JSON.stringify({
            id,
            ok: false,
            code: CodeModeErrorCode.OUTPUT_TOO_LARGE,
            message: `The tool's result (${text.length} characters) is more than a script may hold (${limit}).`,
          })
        : text;
    this.guarded(() => {
      const json = this.vm.newString(fitted);
      const settled = this.slice(() => this.vm.callFunction(settle, this.vm.undefined, json));
      json.dispose();
      if (settled.error) this.failWith(settled.error);
      else settled.value.dispose();
    });
    this.pump();
  }

  private whenSlotFree(): Promise<void> {
    if (this.active < this.limits.maxConcurrentCalls) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((resolve) =>
      this.waiting.push(() => {
        this.active++;
        resolve();
      }),
    );
  }

  private releaseSlot(): void {
    this.active--;
    this.waiting.shift()?.();
  }

  private hostLog(textHandle: QuickJSHandle): void {
    if (this.logsCut) return;
    const room = this.limits.maxOutputBytes - this.logBytes;
    const text = this.readString(textHandle, room);
    if (text === undefined) {
      this.logsCut = true;
      this.logs.push(`[console output cut at ${this.limits.maxOutputBytes} bytes]`);
      return;
    }
    this.logBytes += Buffer.byteLength(text) + 1;
    this.logs.push(text);
  }

  private hostDone(okHandle: QuickJSHandle, jsonHandle: QuickJSHandle): void {
    if (this.outcome) return;
    const ok = this.vm.typeof(okHandle) === 'boolean' && this.vm.dump(okHandle) === true;
    const json = this.readString(jsonHandle, this.limits.maxOutputBytes);
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
    try {
      if (this.settleCall?.alive) this.settleCall.dispose();
      this.vm.dispose();
      this.runtime.dispose();
    } catch (error) {
      // The script's outcome stands; only the module is lost.
      this.input.onFault(error);
    }
  }
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
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

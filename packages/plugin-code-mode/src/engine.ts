import { newQuickJSWASMModuleFromVariant, newVariant } from 'quickjs-emscripten-core';
import type { EmscriptenModuleLoaderOptions, QuickJSSyncVariant, QuickJSWASMModule } from 'quickjs-emscripten-core';
import variantModule from '@jitl/quickjs-wasmfile-release-sync';
import { PRELUDE } from './prelude.js';

// The package's types describe its CommonJS face; loaded as ESM, its default export is the variant itself.
const variant: QuickJSSyncVariant =
  (variantModule as unknown as { default?: QuickJSSyncVariant }).default ??
  (variantModule as unknown as QuickJSSyncVariant);

// This build loads no DOM types, where the binding's options type WebAssembly's memory.
const WasmMemory = (
  globalThis as unknown as { WebAssembly: { Memory: new (limits: { initial: number; maximum: number }) => unknown } }
).WebAssembly.Memory;

const PAGE = 64 << 10;
/** The module's largest memory (its build's maximum). */
const MAX_MEMORY = 2 ** 31 - PAGE;
/**
 * Memory beyond a script's heap limit: the module's own data and stack, and
 * the allocator's slack (a script that keeps growing an array leaves freed
 * blocks it cannot reuse). With less (4 MiB), a script of 200,000 small
 * objects under a 16 MiB heap ran out of memory before QuickJS's own limit.
 */
export const MODULE_HEADROOM = 16 << 20;

/**
 * The memory of a module that runs scripts with a heap of `heapBytes`, fixed
 * when the module is made (pages no script touched cost address space only).
 * It does not grow, for two reasons: a script's memory then has a bound
 * (QuickJS's heap limit does not count every allocation: typed arrays were
 * seen to take a growing module to its 2 GB maximum under a 16 MB limit), and
 * a memory that grows while the binding runs pending jobs makes it leave a
 * stray context in the runtime, which freeing the runtime then aborts on (see
 * `ScriptRun`).
 */
export function moduleMemoryBytes(heapBytes: number): number {
  // Everything a script holds, typed arrays included (which QuickJS's heap limit does not count), fits in this:
  // the heap limit plus the headroom. It was six times the heap limit: 408 MiB of typed arrays at a 64 MiB limit.
  const wanted = heapBytes + MODULE_HEADROOM;
  return Math.min(MAX_MEMORY, Math.ceil(wanted / PAGE) * PAGE);
}

/**
 * The QuickJS WebAssembly module of one worker, compiled on first use with
 * a fixed memory for scripts with a heap of `heapBytes`. Each script gets its own runtime (heap,
 * limits) inside it; a module that faulted is dropped and compiled afresh for
 * the next script.
 */
export class Engine {
  private module: Promise<QuickJSWASMModule> | undefined;
  private size = 0;

  get(heapBytes: number): Promise<QuickJSWASMModule> {
    const size = moduleMemoryBytes(heapBytes);
    // A larger heap than the module was sized for: a fresh module, sized for it.
    if (size > this.size) this.module = undefined;
    if (this.module === undefined) {
      this.size = size;
      // A memory that cannot grow: past it, QuickJS's allocations fail and the script ends with MEMORY_LIMIT.
      const wasmMemory = new WasmMemory({ initial: size / PAGE, maximum: size / PAGE });
      const emscriptenModule: EmscriptenModuleLoaderOptions & { wasmMemory: unknown } = { wasmMemory };
      this.module = newQuickJSWASMModuleFromVariant(newVariant(variant, { emscriptenModule }))
        .then(warm)
        .catch((error: unknown) => {
          this.module = undefined;
          throw error;
        });
    }
    return this.module;
  }

  /** Forgets the module after a fault inside it, so the next script starts on a fresh one. */
  reset(): void {
    this.module = undefined;
    this.size = 0;
  }
}

/**
 * Runs the prelude and a small script once in a fresh module. V8 compiles a
 * module's functions on their first call, and the first run of the prelude
 * costs some 60 ms of compiling (about 1 ms after): the worker's start, not
 * the first script's CPU time.
 */
function warm(module: QuickJSWASMModule): QuickJSWASMModule {
  const runtime = module.newRuntime();
  const vm = runtime.newContext();
  try {
    for (const code of [PRELUDE, WARM_SCRIPT]) {
      const result = vm.evalCode(code, 'warm.js');
      (result.error ?? result.value).dispose();
    }
    runtime.executePendingJobs().dispose();
  } finally {
    vm.dispose();
    runtime.dispose();
  }
  return module;
}

const WARM_SCRIPT =
  '(async () => { const x = JSON.parse(\'{"a":[1,"b",{"c":null}]}\'); await null; return JSON.stringify(x).length; })()';

import { newQuickJSWASMModuleFromVariant, newVariant } from 'quickjs-emscripten-core';
import type { EmscriptenModuleLoaderOptions, QuickJSSyncVariant, QuickJSWASMModule } from 'quickjs-emscripten-core';
import variantModule from '@jitl/quickjs-wasmfile-release-sync';

// The package's types describe its CommonJS face; loaded as ESM, its default export is the variant itself.
const variant: QuickJSSyncVariant =
  (variantModule as unknown as { default?: QuickJSSyncVariant }).default ??
  (variantModule as unknown as QuickJSSyncVariant);

const PAGE = 64 << 10;
/** The module's largest memory (its build's maximum). */
const MAX_MEMORY = 2 ** 31 - PAGE;
/** Memory beyond a script's heap limit: the module's own data and stack. */
const HEADROOM = 32 << 20;
/**
 * The allocator's memory per byte of heap a script may hold: a script that
 * keeps growing an array leaves freed blocks it cannot reuse, and was measured
 * to need several times its limit before QuickJS refuses it (past this, the
 * run notices the growth and drops the module; see `ScriptRun`).
 */
const SPREAD = 4;

/**
 * The memory a module starts with so that one script's heap fits without
 * growing it (pages the script does not touch cost address space only): a memory that grows while the binding runs pending jobs makes
 * it leave a stray context in the runtime (see `ScriptRun`).
 */
export function initialMemoryBytes(heapBytes: number): number {
  const wanted = heapBytes * SPREAD + HEADROOM;
  return Math.min(MAX_MEMORY, Math.ceil(wanted / PAGE) * PAGE);
}

/**
 * The QuickJS WebAssembly module of one worker, compiled on first use with
 * room for a heap of `heapBytes`. Each script gets its own runtime (heap,
 * limits) inside it; a module that faulted is dropped and compiled afresh for
 * the next script.
 */
export class Engine {
  private module: Promise<QuickJSWASMModule> | undefined;
  private size = 0;

  get(heapBytes: number): Promise<QuickJSWASMModule> {
    const size = initialMemoryBytes(heapBytes);
    // A larger heap than the module was sized for: a fresh module, sized for it.
    if (size > this.size) this.module = undefined;
    if (this.module === undefined) {
      this.size = size;
      // Emscripten reads INITIAL_MEMORY from the module options; the binding's types do not list it.
      const emscriptenModule: EmscriptenModuleLoaderOptions & { INITIAL_MEMORY: number } = { INITIAL_MEMORY: size };
      this.module = newQuickJSWASMModuleFromVariant(newVariant(variant, { emscriptenModule })).catch(
        (error: unknown) => {
          this.module = undefined;
          throw error;
        },
      );
    }
    return this.module;
  }

  /** Forgets the module after a fault inside it, so the next script starts on a fresh one. */
  reset(): void {
    this.module = undefined;
    this.size = 0;
  }
}

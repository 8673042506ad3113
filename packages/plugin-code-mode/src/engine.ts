import { newQuickJSWASMModuleFromVariant } from 'quickjs-emscripten-core';
import type { QuickJSSyncVariant, QuickJSWASMModule } from 'quickjs-emscripten-core';
import variantModule from '@jitl/quickjs-wasmfile-release-sync';

// The package's types describe its CommonJS face; loaded as ESM, its default export is the variant itself.
const variant: QuickJSSyncVariant =
  (variantModule as unknown as { default?: QuickJSSyncVariant }).default ??
  (variantModule as unknown as QuickJSSyncVariant);

/**
 * The QuickJS WebAssembly module of one plugin instance, compiled on first
 * use. Each script gets its own runtime (heap, limits) inside it; a module
 * that faulted is dropped and compiled afresh for the next script.
 */
export class Engine {
  private module: Promise<QuickJSWASMModule> | undefined;

  get(): Promise<QuickJSWASMModule> {
    this.module ??= newQuickJSWASMModuleFromVariant(variant).catch((error: unknown) => {
      this.module = undefined;
      throw error;
    });
    return this.module;
  }

  /** Forgets the module after a fault inside it, so the next script starts on a fresh one. */
  reset(): void {
    this.module = undefined;
  }
}

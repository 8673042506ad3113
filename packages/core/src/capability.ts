import { CoreErrorCode, SluiceError } from './errors.js';

/**
 * Code another package gives core as it loads (`import '@sluice/http'`): a
 * capability, not state, the same for every server of this copy of core.
 */
export interface Capability<T> {
  /** Called by the providing package as it loads. */
  readonly provide: (provided: T) => void;
  /** What was provided, or undefined while no import did. */
  readonly provided: () => T | undefined;
  /** What was provided; throws `INVALID_STATE` naming the import when none did. */
  readonly get: () => T;
}

/** A capability that `pkg` provides for `method` (`server.listen()`), named so in the error without it. */
export function capability<T>(method: string, pkg: string): Capability<T> {
  let value: T | undefined;
  return {
    provide: (provided) => {
      value = provided;
    },
    provided: () => value,
    get: () => {
      if (value !== undefined) return value;
      throw new SluiceError(
        CoreErrorCode.INVALID_STATE,
        `${method} is served by ${pkg}: install it and import it once in the program (import '${pkg}')`,
      );
    },
  };
}

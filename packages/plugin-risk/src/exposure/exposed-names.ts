/**
 * Which name each exposed upstream tool goes by: `(upstream, original
 * name)` to the name clients see. The ledger speaks in upstream names, calls
 * and holds in exposed ones.
 */
export class ExposedNames {
  /** `server \u0000 upstream name` to the exposed name. */
  private readonly names = new Map<string, string>();

  set(server: string, tool: string, name: string): void {
    this.names.set(`${server}\u0000${tool}`, name);
  }

  /** The exposed name of an upstream tool, if it is exposed. */
  of(server: string, tool: string): string | undefined {
    return this.names.get(`${server}\u0000${tool}`);
  }

  /** Upstreams with tools exposed now: what a shared ledger's changes can touch. */
  upstreams(): string[] {
    return [...new Set([...this.names.keys()].map((key) => key.slice(0, key.indexOf('\u0000'))))];
  }
}

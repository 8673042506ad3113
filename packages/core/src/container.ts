import type { FeatureRequests } from './features/feature-guards.js';
// reflect-metadata first: tsyringe checks for the polyfill as it loads.
import 'reflect-metadata';
import { container } from 'tsyringe';
import type { DependencyContainer, InjectionToken } from 'tsyringe';
import type { Clock } from './clock.js';
import type { Logger } from './logger.js';
import type { Store } from './store/types.js';
import type { Approver } from './approval.js';
import { Redactions } from './redactions.js';
import { AuditLog } from './store/audit-log.js';
import type { AuditOptions } from './store/audit-log.js';

// Static imports, so that a bundler carries tsyringe and the polyfill into a
// single file: every server builds its container, so nothing is saved by
// loading them later.
function rootContainer(): DependencyContainer {
  return container;
}

/**
 * Tokens for the services in each server's container. `Symbol.for` keys, so
 * that two copies of core agree on them.
 */
export const Tokens = Object.freeze({
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- the cast gives the token its service type, which Services reads
  Logger: Symbol.for('dev.sluice/Logger') as InjectionToken<Logger>,
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- the cast gives the token its service type, which Services reads
  Clock: Symbol.for('dev.sluice/Clock') as InjectionToken<Clock>,
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- the cast gives the token its service type, which Services reads
  Store: Symbol.for('dev.sluice/Store') as InjectionToken<Store>,
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- the cast gives the token its service type, which Services reads
  Approver: Symbol.for('dev.sluice/Approver') as InjectionToken<Approver>,
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- the cast gives the token its service type, which Services reads
  Redactions: Symbol.for('dev.sluice/Redactions') as InjectionToken<Redactions>,
  /** Resource reads and prompt gets as a request's caller would make them; registered once a server imports. */
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- the cast gives the token its service type, which Services reads
  FeatureRequests: Symbol.for('dev.sluice/FeatureRequests') as InjectionToken<FeatureRequests>,
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- the cast gives the token its service type, which Services reads
  Audit: Symbol.for('dev.sluice/Audit') as InjectionToken<AuditLog>,
});

/** What a plugin may resolve: typed shortcuts for the core services, and the container for its own. */
export interface Services {
  readonly logger: Logger;
  readonly clock: Clock;
  readonly store: Store;
  /** Values masked out of core's log lines that carry upstream text. */
  readonly redactions: Redactions;
  /** The hash-chained audit log in the store: `audit.append({ kind, ... })` records a decision. */
  readonly audit: AuditLog;
  /** The server's own child container: register or resolve further services by token. */
  readonly container: DependencyContainer;
}

export interface CoreServices {
  logger: Logger;
  clock: Clock;
  store: Store;
  /** The audit log's retention. */
  audit?: AuditOptions;
}

/** A child container per server, so that no state leaks between servers. */
export function createServerContainer(services: CoreServices): DependencyContainer {
  const child = rootContainer().createChildContainer();
  child.register(Tokens.Logger, { useValue: services.logger });
  child.register(Tokens.Clock, { useValue: services.clock });
  child.register(Tokens.Store, { useValue: services.store });
  child.register(Tokens.Redactions, { useValue: new Redactions() });
  child.register(Tokens.Audit, {
    useValue: new AuditLog(services.store.audit, services.clock, services.logger, services.audit),
  });
  return child;
}

export function servicesOf(container: DependencyContainer): Services {
  return Object.freeze({
    get logger() {
      return container.resolve(Tokens.Logger);
    },
    get clock() {
      return container.resolve(Tokens.Clock);
    },
    get store() {
      return container.resolve(Tokens.Store);
    },
    get redactions() {
      return container.resolve(Tokens.Redactions);
    },
    get audit() {
      return container.resolve(Tokens.Audit);
    },
    container,
  });
}

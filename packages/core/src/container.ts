import type { FeatureRequests } from './features/feature-guards.js';
import type { DependencyContainer, InjectionToken } from 'tsyringe';
import { rootContainer } from '#root-container';
import type { Clock } from './clock.js';
import type { Logger } from './logger.js';
import type { Store } from './store/types.js';
import type { Approver } from './approval.js';
import { Redactions } from './redactions.js';
import { serverAudit } from './audit.js';
import type { Audit, AuditOptions } from './audit.js';

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
  Audit: Symbol.for('dev.sluice/Audit') as InjectionToken<Audit>,
});

/** What a plugin may resolve: typed shortcuts for the core services, and the container for its own. */
export interface Services {
  readonly logger: Logger;
  readonly clock: Clock;
  readonly store: Store;
  /** Values masked out of core's log lines that carry upstream text. */
  readonly redactions: Redactions;
  /** The audit log (`@sluice/audit`, hash-chained in the store): `audit.append({ kind, ... })` records a decision. */
  readonly audit: Audit;
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

/** A server's services, and its container if anything has asked for it. */
export interface ServerServices {
  readonly services: Services;
  /** The container, or undefined while nothing has asked for it (no service can be registered there yet). */
  createdContainer(): DependencyContainer | undefined;
}

/**
 * A server's services. Its child container (tsyringe) is created on the first
 * read of `container`, so a server whose plugins use only the typed services
 * (every guard an adopted server holds) never loads tsyringe. Until then the
 * services are served as given; once the container exists they are resolved
 * from it, so that a service registered over a core token replaces the typed
 * one, as it always did.
 */
export function createServerServices(core: CoreServices): ServerServices {
  const logger = core.logger;
  const clock = core.clock;
  const store = core.store;
  const redactions = new Redactions();
  const audit = serverAudit(store, clock, logger, core.audit);
  let child: DependencyContainer | undefined;
  const container = (): DependencyContainer => {
    if (child !== undefined) return child;
    // A child container per server, so that no state leaks between servers.
    const created = rootContainer().createChildContainer();
    created.register(Tokens.Logger, { useValue: logger });
    created.register(Tokens.Clock, { useValue: clock });
    created.register(Tokens.Store, { useValue: store });
    created.register(Tokens.Redactions, { useValue: redactions });
    created.register(Tokens.Audit, { useFactory: audit });
    child = created;
    return created;
  };
  const services: Services = Object.freeze({
    get logger() {
      return child === undefined ? logger : child.resolve(Tokens.Logger);
    },
    get clock() {
      return child === undefined ? clock : child.resolve(Tokens.Clock);
    },
    get store() {
      return child === undefined ? store : child.resolve(Tokens.Store);
    },
    get redactions() {
      return child === undefined ? redactions : child.resolve(Tokens.Redactions);
    },
    get audit() {
      return child === undefined ? audit() : child.resolve(Tokens.Audit);
    },
    get container() {
      return container();
    },
  });
  return { services, createdContainer: () => child };
}

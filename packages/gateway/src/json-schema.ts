import { z } from 'zod';
import { GatewayConfig } from './config-schema.js';

/**
 * The JSON Schema (draft 2020-12) of the config file as written: fields with
 * defaults are optional. Built from the same zod schema that validates it,
 * which reuses each plugin's own options schema.
 */
export function gatewayJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(GatewayConfig, { io: 'input', target: 'draft-2020-12' });
  return {
    ...schema,
    title: 'Sluice gateway config',
    description: 'The config file of `sluice serve`: upstreams, plugins, listeners, store.',
  };
}

// Each plugin's README documents its options in a table; this checks the table
// against the zod schema the plugin exports, so neither can drift alone.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ChainingOptions } from '../../packages/plugin-chaining/src/index.js';
import { CodeModeOptions } from '../../packages/plugin-code-mode/src/index.js';
import { ConcurrencyOptions } from '../../packages/plugin-concurrency/src/index.js';
import { EgressOptions } from '../../packages/plugin-egress/src/index.js';
import { LoopGuardOptions } from '../../packages/plugin-loop-guard/src/index.js';
import { RiskOptions } from '../../packages/plugin-risk/src/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The option names in the first column of the first table under `## Options`; rows of a record's values (`…x`) aside. */
export function optionRows(readme: string): string[] {
  const section = readme.split(/^## Options\s*$/m)[1]?.split(/^## /m)[0] ?? '';
  const table = section.split(/\n\n/).find((block) => block.trimStart().startsWith('| option'));
  if (table === undefined) return [];
  return table
    .trim()
    .split('\n')
    .slice(2)
    .map((row) => /^\|\s*`([^`]+)`/.exec(row)?.[1])
    .filter((name): name is string => name !== undefined && !name.startsWith('…'));
}

/** What this test reads of a zod schema: its definition's kind and what it wraps. */
interface Schema {
  readonly def: {
    readonly type: string;
    readonly shape?: Record<string, Schema>;
    readonly innerType?: Schema;
    readonly options?: readonly Schema[];
  };
}

/** The fields of the object schema inside defaults, optionals and `false | {...}` unions. */
function fieldsOf(schema: Schema): Record<string, Schema> | undefined {
  const { def } = schema;
  if (def.type === 'object') return def.shape;
  if (def.innerType !== undefined) return fieldsOf(def.innerType);
  if (def.type === 'union') return def.options?.map(fieldsOf).find((found) => found !== undefined);
  return undefined;
}

const plugins: [string, Schema][] = [
  ['plugin-loop-guard', LoopGuardOptions],
  ['plugin-chaining', ChainingOptions],
  ['plugin-concurrency', ConcurrencyOptions],
  ['plugin-egress', EgressOptions],
  ['plugin-risk', RiskOptions],
  ['plugin-code-mode', CodeModeOptions],
];

describe('the options tables of the plugin READMEs', () => {
  it('reads an options table', () => {
    const readme =
      '## Options\n\ntext\n\n| option | type |\n|---|---|\n| `a` | x |\n| `a.b` | y |\n| `…c` | z |\n\n## Next\n';
    expect(optionRows(readme)).toEqual(['a', 'a.b']);
  });

  for (const [pkg, schema] of plugins) {
    it(`${pkg}: lists exactly the top-level options of its schema`, () => {
      const rows = optionRows(readFileSync(join(root, 'packages', pkg, 'README.md'), 'utf8'));
      const documented = [...new Set(rows.map((row) => row.split('.')[0]))].sort();
      expect(documented).toEqual(Object.keys(fieldsOf(schema)!).sort());
    });

    it(`${pkg}: lists exactly the nested options of each option it breaks down`, () => {
      const rows = optionRows(readFileSync(join(root, 'packages', pkg, 'README.md'), 'utf8'));
      const parents = new Set(rows.filter((r) => r.includes('.')).map((r) => r.split('.')[0]!));
      for (const parent of parents) {
        const outer = fieldsOf(schema)![parent];
        const inner = outer === undefined ? undefined : fieldsOf(outer);
        expect(inner, `${parent} has no object of options`).toBeDefined();
        const documented = rows.filter((r) => r.startsWith(`${parent}.`)).map((r) => r.slice(parent.length + 1));
        expect(documented.sort(), parent).toEqual(Object.keys(inner!).sort());
      }
    });
  }
});

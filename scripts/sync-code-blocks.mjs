// Rewrites every TypeScript block that names a source region
// (`<!-- source: file#region -->`) with that region's current text, so a
// formatter or refactor never leaves a guide quoting stale code. The docs test
// checks the same pairing; this script mends it.
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export function documentsWithBlocks() {
  const docs = readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f));
  const packages = readdirSync(join(root, 'packages'))
    .map((name) => join('packages', name, 'README.md'))
    .filter((file) => existsSync(join(root, file)));
  return [...docs, 'README.md', ...packages];
}

export function region(source) {
  const [file, name] = source.split('#');
  const text = readFileSync(join(root, file), 'utf8');
  const open = `// #region ${name}\n`;
  const start = text.indexOf(open);
  const end = text.indexOf(`// #endregion ${name}`);
  if (start === -1 || end === -1) throw new Error(`${source}: no region "${name}"`);
  return text.slice(start + open.length, end).replace(/\n[ \t]*$/, '');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  let changed = 0;
  for (const doc of documentsWithBlocks()) {
    const path = join(root, doc);
    const text = readFileSync(path, 'utf8');
    const next = text.replace(
      /(<!-- source: (\S+) -->\n```ts\n)([\s\S]*?)(\n```)/g,
      (_m, head, source, _code, tail) => {
        return head + region(source) + tail;
      },
    );
    if (next !== text) {
      writeFileSync(path, next);
      changed += 1;
      process.stderr.write(`updated ${doc}\n`);
    }
  }
  process.stderr.write(`${changed} document(s) updated\n`);
}

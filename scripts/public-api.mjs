// Writes packages/<name>/public-api.txt from the package's entry points.
// Run after changing a package's exports on purpose: node scripts/public-api.mjs <name>...
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

function declared(file) {
  const text = readFileSync(file, 'utf8');
  const names = [];
  for (const m of text.matchAll(/export\s+(type\s+)?\{([^}]*)\}/g)) {
    for (const raw of m[2].split(',')) {
      const part = raw.trim();
      if (!part) continue;
      const isType = Boolean(m[1]) || part.startsWith('type ');
      names.push(
        `${isType ? 'type' : 'value'} ${part
          .replace(/^type\s+/, '')
          .split(/\s+as\s+/)
          .pop()
          .trim()}`,
      );
    }
  }
  for (const m of text.matchAll(
    /export\s+(?:declare\s+)?(const|function|class|interface|type|enum)\s+([A-Za-z0-9_$]+)/g,
  )) {
    names.push(`${m[1] === 'interface' || m[1] === 'type' ? 'type' : 'value'} ${m[2]}`);
  }
  return [...new Set(names)].sort();
}

for (const name of process.argv.slice(2)) {
  const dir = join('packages', name);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  let out =
    `# The public API of ${pkg.name}, one entry point per section. ` +
    'Change it on purpose: test/public-api.test.ts compares it with src.\n';
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    if (typeof target !== 'object' || !target['sluice:source']) continue;
    out += `\n## ${subpath}\n${declared(join(dir, target['sluice:source'])).join('\n')}\n`;
  }
  writeFileSync(join(dir, 'public-api.txt'), out);
  process.stdout.write(`wrote ${dir}/public-api.txt\n`);
}

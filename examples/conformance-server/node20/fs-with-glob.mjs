// node:fs plus the part of fs.globSync the conformance CLI uses: relative file
// paths under `options.cwd` matching a pattern such as '**/checks.json'.
import fs from 'node:fs';
import path from 'node:path';

export * from 'node:fs';
export default fs;

function filesUnder(root) {
  const found = [];
  const walk = (dir, prefix) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(path.join(dir, entry.name), relative);
      else found.push(relative);
    }
  };
  walk(root, '');
  return found;
}

export function globSync(pattern, options = {}) {
  if (typeof pattern !== 'string') throw new TypeError('globSync here takes one pattern string');
  const root = options.cwd === undefined ? process.cwd() : String(options.cwd);
  // path.matchesGlob exists on Node 20.17+; '**/' also matches at the top level, as in Node 22.
  return filesUnder(root).filter(
    (file) =>
      path.matchesGlob(file, pattern) || (pattern.startsWith('**/') && path.matchesGlob(file, pattern.slice(3))),
  );
}

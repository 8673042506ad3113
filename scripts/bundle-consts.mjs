// Gives a bundle's top-level constants back their `const`.
//
// esbuild writes every top-level declaration of a bundle as `var` (its FAQ: "top-level var"), the sources'
// `const` included. V8 folds a module's `const` into the code that reads it, a table or a number read in a hot
// loop included; a `var` it loads anew at each use, and checks. The risk plugin's scan ran about 5 % slower from
// its bundle than from its sources for that alone (bench/risk.bench.ts).
//
// A `var` becomes `const` here only where nothing can tell them apart: a single name, declared at the top level
// with a value, declared nowhere else in the file, and never the target of an assignment, an increment or a loop's
// binding anywhere in it (by name, whatever scope the target is in: a name written anywhere stays `var`); a file
// with a direct `eval` or a `with` is left as it is. `var NAME = ` becomes `const NAME=`, the same length, so the
// value stays where the source map puts it. One difference is kept on purpose: a read of the name before its
// declaration runs throws, as it does from the sources, where esbuild's `var` would read `undefined`.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The bundle's text with its constant top-level `var`s declared `const`, and how many there were. */
export function constsOfBundle(text) {
  const ts = require('typescript');
  const file = ts.createSourceFile('bundle.js', text, ts.ScriptTarget.Latest, false, ts.ScriptKind.JS);
  const written = new Set();
  const writeTargets = (node) => {
    if (ts.isIdentifier(node)) written.add(node.text);
    else if (ts.isParenthesizedExpression(node)) writeTargets(node.expression);
    else if (ts.isArrayLiteralExpression(node)) node.elements.forEach(writeTargets);
    else if (ts.isObjectLiteralExpression(node))
      for (const property of node.properties) {
        if (ts.isShorthandPropertyAssignment(property)) written.add(property.name.text);
        else if (ts.isPropertyAssignment(property)) writeTargets(property.initializer);
        else if (ts.isSpreadAssignment(property)) writeTargets(property.expression);
      }
    else if (ts.isSpreadElement(node)) writeTargets(node.expression);
    // A default in a pattern (`[a = 1] = []`) is an assignment of its own, which the walk finds.
  };
  // How many times each name is declared with `var`, a function or a class, anywhere in the file (a `var` in a
  // block or a loop's head at the top level is the same binding; one inside a function is not, but is counted too).
  const declared = new Map();
  const count = (name) => declared.set(name, (declared.get(name) ?? 0) + 1);
  let dynamic = false; // a direct `eval` or a `with` can write any name
  // One walk over the file: what it writes, and what it declares.
  const visit = (node) => {
    if (ts.isBinaryExpression(node) && isAssignment(ts, node.operatorToken.kind)) writeTargets(node.left);
    else if (
      (ts.isPrefixUnaryExpression(node) || ts.isPostfixUnaryExpression(node)) &&
      (node.operator === ts.SyntaxKind.PlusPlusToken || node.operator === ts.SyntaxKind.MinusMinusToken)
    )
      writeTargets(node.operand);
    else if (
      (ts.isForInStatement(node) || ts.isForOfStatement(node)) &&
      !ts.isVariableDeclarationList(node.initializer)
    )
      writeTargets(node.initializer);
    else if (ts.isVariableDeclarationList(node) && !(node.flags & ts.NodeFlags.BlockScoped))
      for (const declaration of node.declarations) namesOf(ts, declaration.name).forEach(count);
    else if ((ts.isFunctionDeclaration(node) || ts.isClassDeclaration(node)) && node.name) count(node.name.text);
    else if (ts.isWithStatement(node)) dynamic = true;
    else if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'eval')
      dynamic = true;
    ts.forEachChild(node, visit);
  };
  visit(file);
  if (dynamic) return { text, consts: 0 };

  const edits = [];
  for (const statement of file.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    const list = statement.declarationList;
    if (list.flags & ts.NodeFlags.BlockScoped || list.declarations.length !== 1) continue;
    const [declaration] = list.declarations;
    if (!ts.isIdentifier(declaration.name) || declaration.initializer === undefined) continue;
    const name = declaration.name.text;
    if (written.has(name) || declared.get(name) !== 1) continue;
    const start = list.getStart(file);
    const head = `var ${name} = `;
    if (text.slice(start, start + head.length) !== head) continue;
    edits.push({ start, end: start + head.length, replacement: `const ${name}=` });
  }
  let out = text;
  for (const edit of edits.reverse()) out = out.slice(0, edit.start) + edit.replacement + out.slice(edit.end);
  return { text: out, consts: edits.length };
}

function isAssignment(ts, kind) {
  return kind >= ts.SyntaxKind.FirstAssignment && kind <= ts.SyntaxKind.LastAssignment;
}

function namesOf(ts, binding) {
  if (ts.isIdentifier(binding)) return [binding.text];
  return binding.elements.flatMap((element) => (ts.isOmittedExpression(element) ? [] : namesOf(ts, element.name)));
}

// Gives a bundle's top-level constants back their `const`.
//
// esbuild writes every top-level declaration of a bundle as `var` (its FAQ: "top-level var"), the sources'
// `const` included. V8 folds a module's `const` into the code that reads it, a table or a number read in a hot
// loop included; a `var` it loads anew at each use, and checks. The risk plugin's scan ran about 5 % slower from
// its bundle than from its sources for that alone (bench/risk.bench.ts).
//
// A `var` becomes `const` here only where nothing can tell them apart: a single name, declared once at the top
// level with a value, and never the target of an assignment, an increment or a loop's binding anywhere in the
// file (by name, whatever scope the target is in: a name written anywhere stays `var`). `var NAME = ` becomes
// `const NAME=`, the same length, so the value stays where the source map puts it.
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
    // A default in a pattern (`[a = 1] = []`) is an assignment of its own, which the walk below finds.
  };
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
    ts.forEachChild(node, visit);
  };
  visit(file);

  const declared = new Map(); // top-level name to how many declarations
  const count = (name) => declared.set(name, (declared.get(name) ?? 0) + 1);
  for (const statement of file.statements) {
    if (ts.isVariableStatement(statement))
      for (const declaration of statement.declarationList.declarations) namesOf(ts, declaration.name).forEach(count);
    else if ((ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement)) && statement.name)
      count(statement.name.text);
  }

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

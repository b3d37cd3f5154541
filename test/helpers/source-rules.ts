import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

export const SRC = new URL("../../src/", import.meta.url).pathname;

/** Every .ts file under src/, as paths relative to src/ ("store/stores.ts"). */
export function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [relative(SRC, path)] : [];
  });
}

export function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(
    file,
    readFileSync(join(SRC, file), "utf8"),
    ts.ScriptTarget.Latest,
    true,
  );
}

/**
 * What a file imports: package names as written ("kysely"), local modules as paths relative
 * to src/ ("store/tables.ts"). Type-only imports count: they are dependencies too.
 */
export function importsOf(file: string): string[] {
  const source = parse(file);
  const specifiers: string[] = [];
  const visit = (node: ts.Node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier !== undefined &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      specifiers.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      specifiers.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers.map((s) =>
    s.startsWith(".") ? relative(SRC, join(SRC, file, "..", s)).replace(/\.js$/, ".ts") : s,
  );
}

export function lineCount(file: string): number {
  return readFileSync(join(SRC, file), "utf8").trimEnd().split("\n").length;
}

/**
 * Each function's lines: its span less the spans of the methods of object literals written
 * inside it, so that a factory returning an object of methods (a store, the services) is
 * measured like a class: each method on its own. Callbacks and local helpers count toward the
 * function that holds them.
 */
export function functionLengths(file: string): { name: string; line: number; lines: number }[] {
  const source = parse(file);
  const found: { name: string; line: number; lines: number }[] = [];
  const span = (node: ts.Node) =>
    source.getLineAndCharacterOfPosition(node.getEnd()).line -
    source.getLineAndCharacterOfPosition(node.getStart(source)).line +
    1;
  const isFunction = (node: ts.Node): node is ts.FunctionLikeDeclaration =>
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isArrowFunction(node) ||
    ts.isFunctionExpression(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node);
  const isMember = (node: ts.Node) =>
    isFunction(node) &&
    (ts.isObjectLiteralExpression(node.parent) ||
      (ts.isPropertyAssignment(node.parent) && ts.isObjectLiteralExpression(node.parent.parent)));
  /** Lines of the object-literal methods inside `node` (not nested deeper). */
  const innerLines = (node: ts.Node): number => {
    let total = 0;
    ts.forEachChild(node, (child) => {
      total += isMember(child) ? span(child) : isFunction(child) ? 0 : innerLines(child);
    });
    return total;
  };
  const visit = (node: ts.Node) => {
    if (isFunction(node)) {
      const name = node.name?.getText(source) ?? nameOfParent(node, source);
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      found.push({ name, line, lines: span(node) - innerLines(node) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function nameOfParent(node: ts.Node, source: ts.SourceFile): string {
  const parent = node.parent;
  if (parent !== undefined && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)))
    return parent.name.getText(source);
  return "(anonymous)";
}

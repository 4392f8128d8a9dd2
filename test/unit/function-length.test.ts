/**
 * No function under `lambdas/` or `lib/` (the CDK stack; issue 34) is longer than
 * {@link MAX_FUNCTION_LINES} lines (issue 25, "Done when"): every function-like node with a body (declarations, methods, accessors, constructors,
 * function expressions and arrow functions, nested ones included) in the tracked `.ts` files,
 * measured by the TypeScript compiler from its first to its last line, comments inside included.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** The longest a function may be, in lines. */
const MAX_FUNCTION_LINES = 120;

interface FunctionSpan {
  /** `path:line` of the function's first line. */
  readonly at: string;
  readonly name: string;
  readonly lines: number;
}

/** The tracked `.ts` files under `folder`, repository-relative. */
function trackedFiles(folder: string): string[] {
  const listed = execFileSync('git', ['ls-files', folder], { cwd: repoRoot, encoding: 'utf8' });
  return listed
    .split('\n')
    .filter((path) => path.endsWith('.ts'))
    .sort();
}

function nameOf(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  if (node.name !== undefined) return node.name.getText(source);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (
    ts.isVariableDeclaration(parent) ||
    ts.isPropertyAssignment(parent) ||
    ts.isPropertyDeclaration(parent)
  ) {
    return parent.name.getText(source);
  }
  return '(anonymous)';
}

/** Every function-like node with a body in a file, with its length in lines. */
function functionSpans(path: string, text: string): FunctionSpan[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const spans: FunctionSpan[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const fn = node as ts.FunctionLikeDeclaration;
      const first = source.getLineAndCharacterOfPosition(fn.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(fn.getEnd()).line;
      spans.push({ at: `${path}:${first + 1}`, name: nameOf(fn, source), lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return spans;
}

describe('function length', () => {
  it('measures what it should: nested and arrow functions count, each on its own', () => {
    const text = [
      'export function outer() {',
      '  const inner = () => {',
      '    return 1;',
      '  };',
      '  return inner();',
      '}',
      'class A { method() { return 2; } }',
    ].join('\n');
    expect(functionSpans('x.ts', text).map(({ name, lines, at }) => [name, lines, at])).toEqual([
      ['outer', 6, 'x.ts:1'],
      ['inner', 3, 'x.ts:2'],
      ['method', 1, 'x.ts:7'],
    ]);
  });

  it.each([
    ['lambdas', 50],
    ['lib', 10],
  ])(`no function under %s/ is longer than ${MAX_FUNCTION_LINES} lines`, (folder, atLeast) => {
    const files = trackedFiles(folder);
    expect(files.length).toBeGreaterThan(atLeast);
    const spans = files.flatMap((path) => functionSpans(path, readFileSync(join(repoRoot, path), 'utf8')));
    const tooLong = spans
      .filter((span) => span.lines > MAX_FUNCTION_LINES)
      .map((span) => `${span.at} ${span.name}: ${span.lines} lines`);
    expect(tooLong).toEqual([]);
  });
});

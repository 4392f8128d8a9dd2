/**
 * The `curl` examples of the project's Markdown, read as a reader would paste them: each `curl`
 * command of a `sh` code block (continuation lines joined, comments dropped), with its method,
 * URL, the route it calls, its `-H` headers, its `-d` body, and the sample answer shown right
 * after it (the `json` code block that follows its code block, when the block holds one curl).
 * Any new example is therefore covered by the tests that use this: openapi-tools.test.ts
 * type-checks the bodies and answers against types generated from docs/openapi.json, and
 * readme-examples.test.ts runs the README's against the local proxy and the ERP double.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ROUTES, type Route } from '../../lambdas/platform/routes.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface CurlExample {
  /** Where it is written: `README.md:50`. */
  readonly where: string;
  readonly method: 'GET' | 'POST';
  /** The URL as written (it may hold shell variables: `${URL}v1/erp/version`). */
  readonly url: string;
  /** The route the URL ends with. */
  readonly route: Route;
  readonly headers: Readonly<Record<string, string>>;
  /** The `-d` text, as written. */
  readonly body: string | undefined;
  /** The `json` block shown right after the example, trimmed. */
  readonly answer: string | undefined;
}

interface CodeBlock {
  readonly lang: string;
  readonly text: string;
  /** Line number (1-based) of the block's first line of code. */
  readonly line: number;
}

/** The fenced code blocks of a Markdown text, and whether only blank lines separate each from the previous one. */
function codeBlocks(markdown: string): { block: CodeBlock; followsPrevious: boolean }[] {
  const lines = markdown.split('\n');
  const blocks: { block: CodeBlock; followsPrevious: boolean }[] = [];
  let lastEnd = -2;
  for (let i = 0; i < lines.length; i += 1) {
    const open = /^```(\w*)\s*$/.exec(lines[i] ?? '');
    if (!open) continue;
    const start = i;
    let end = i + 1;
    while (end < lines.length && !/^```\s*$/.test(lines[end] ?? '')) end += 1;
    const between = lines.slice(lastEnd + 1, start);
    blocks.push({
      block: { lang: open[1] ?? '', text: lines.slice(start + 1, end).join('\n'), line: start + 2 },
      followsPrevious: lastEnd >= 0 && between.every((line) => line.trim() === ''),
    });
    lastEnd = end;
    i = end;
  }
  return blocks;
}

/**
 * Splits shell text into commands (newlines outside quotes; a backslash-newline continues the
 * line), each into words, with the line (0-based) it starts on; comments dropped.
 */
function shellCommands(text: string): { words: string[]; line: number }[] {
  const commands: { words: string[]; line: number }[] = [];
  let words: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  let line = 0;
  let start = 0;
  const endWord = (): void => {
    if (word !== undefined) words.push(word);
    word = undefined;
  };
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i] ?? '';
    if (char === '\n') line += 1;
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
      else word = (word ?? '') + char;
    } else if (char === '\\' && text[i + 1] === '\n') {
      endWord();
      i += 1;
      line += 1;
    } else if (char === "'" || char === '"') {
      quote = char;
      word = word ?? '';
    } else if (char === '#' && word === undefined) {
      while (i + 1 < text.length && text[i + 1] !== '\n') i += 1;
    } else if (char === '\n') {
      endWord();
      if (words.length > 0) commands.push({ words, line: start });
      words = [];
      start = line;
    } else if (char === ' ' || char === '\t') endWord();
    else word = (word ?? '') + char;
  }
  endWord();
  if (words.length > 0) commands.push({ words, line: start });
  return commands;
}

/** The route a URL as written ends with (`${URL}v1/erp/version`: `/v1/erp/version`). */
function routeOf(url: string, method: string): Route | undefined {
  const path = url.replace(/[?#].*$/, '');
  return ROUTES.filter((route) => route.method === method && path.endsWith(route.path.slice(1))).sort(
    (a, b) => b.path.length - a.path.length,
  )[0];
}

/**
 * The `curl` commands of shell text (a code block, or what a command printed), `where` naming
 * the text and `firstLine` its first line's number; `answer` goes to the text's only curl.
 */
export function curlCommands(text: string, where: string, firstLine = 1, answer?: string): CurlExample[] {
  const curls = shellCommands(text).filter(({ words }) => words[0] === 'curl');
  return curls.map(({ words, line: lineInText }) => {
    const headers: Record<string, string> = {};
    let body: string | undefined;
    let url: string | undefined;
    for (let i = 1; i < words.length; i += 1) {
      const word = words[i] ?? '';
      if (word === '-H') {
        const [name = '', ...value] = (words[++i] ?? '').split(':');
        headers[name.trim().toLowerCase()] = value.join(':').trim();
      } else if (word === '-d') body = words[++i];
      else if (!word.startsWith('-')) url = word;
    }
    const method = body === undefined ? 'GET' : 'POST';
    const at = `${where}:${firstLine + lineInText}`;
    const route = url === undefined ? undefined : routeOf(url, method);
    if (url === undefined || route === undefined)
      throw new Error(`${at}: a curl whose URL names no route of the proxy`);
    return { where: at, method, url, route, headers, body, answer: curls.length === 1 ? answer : undefined };
  });
}

/**
 * The pages whose `curl` examples call the local proxy (`npm start`) and the ERP double, as a first
 * reader runs them: the README and the guides that moved out of it (issue 46). readme-examples.test.ts
 * runs them all, and fails when another page holds such an example without being listed here.
 */
export const LOCAL_EXAMPLE_PAGES: readonly string[] = Object.freeze([
  'README.md',
  'docs/guide/getting-started.md',
  'docs/guide/calling.md',
  'docs/guide/retrying-writes.md',
]);

/** The `curl` examples of every page of LOCAL_EXAMPLE_PAGES. */
export function localCurlExamples(): CurlExample[] {
  return LOCAL_EXAMPLE_PAGES.flatMap((page) => curlExamples(page));
}

/** Every `curl` example of a Markdown file of the repository (`docs/guide/calling.md`, `docs/deployment.md`). */
export function curlExamples(file: string): CurlExample[] {
  const markdown = readFileSync(`${root}${file}`, 'utf8');
  const blocks = codeBlocks(markdown);
  return blocks.flatMap(({ block }, index) => {
    if (block.lang !== 'sh') return [];
    const next = blocks[index + 1];
    const answer = next?.followsPrevious && next.block.lang === 'json' ? next.block.text.trim() : undefined;
    return curlCommands(block.text, file, block.line, answer);
  });
}

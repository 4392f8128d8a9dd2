/**
 * @module settings-docs
 * The configuration tables of docs/reference/configuration.md (environment variables) and docs/deployment.md (context
 * parameters), rendered from the settings catalogue and its texts (lib/setting-texts.ts for the
 * runtime settings). `npm run docs:settings` writes them between their markers;
 * test/infra/settings-catalogue.test.ts fails when a committed table differs.
 */
import { SETTING_READERS } from '../lambdas/platform/names.ts';
import {
  defaultTextOf,
  RUNTIME_SETTINGS,
  type RuntimeSettingName,
  type Setting,
} from '../lambdas/platform/settings.ts';
import { RUNTIME_SETTING_TEXTS, type SettingText } from './setting-texts.ts';
import { STACK_SETTINGS, type StackSetting } from './stack-settings.ts';

/** A table's place in a document: between `<!-- settings:<id> -->` and `<!-- /settings:<id> -->`. */
export interface GeneratedTable {
  readonly file: string;
  readonly id: string;
  readonly render: () => string;
}

/** A runtime setting with its texts. */
interface RuntimeEntry {
  readonly setting: Setting;
  readonly text: SettingText;
}

const runtimeEntries = (): RuntimeEntry[] =>
  (Object.entries(RUNTIME_SETTINGS) as [RuntimeSettingName, Setting][]).map(([key, setting]) => ({
    setting,
    text: RUNTIME_SETTING_TEXTS[key],
  }));
const stackEntries = (): StackSetting[] =>
  Object.values(STACK_SETTINGS as Readonly<Record<string, StackSetting>>);

/** A default as a table shows it: a bare value as code, markdown as it is, nothing as `empty`. */
function shownDefault(text: string, empty: string): string {
  if (text === '') return empty;
  return text.startsWith('*') || text.includes('`') ? text : `\`${text}\``;
}

/** `|` would end a cell. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

/** How a runtime setting is set on a deployed stack. */
function onAws({ setting, text }: RuntimeEntry): string {
  if (setting.context !== undefined) return `\`${setting.context}\``;
  const not = setting.notDeployable;
  if (not === undefined) return '';
  const fixed = not.value === undefined ? '' : ` (\`${not.value}\`)`;
  if (not.by === 'stack') return `set by the stack${fixed}: ${text.why}`;
  if (not.by === 'lambda') return 'set by Lambda';
  return `local only: ${text.why}`;
}

/** The functions that read a setting, in the order of `SETTING_READERS`. */
function functionsOf(setting: Setting): string {
  return [...setting.readBy]
    .sort((a, b) => SETTING_READERS.indexOf(a) - SETTING_READERS.indexOf(b))
    .join(', ');
}

function readBy(setting: Setting): string {
  return setting.readBy.length === 0 ? 'local server' : functionsOf(setting);
}

/** docs/reference/configuration.md's table: every environment variable the functions and the local server read. */
export function renderEnvironmentTable(): string {
  const rows = runtimeEntries().map(
    (entry) =>
      `| \`${entry.setting.env}\` | ${cell(shownDefault(defaultTextOf(entry.setting, entry.text.defaultText), ''))} | ${readBy(entry.setting)} | ${cell(onAws(entry))} | ${cell(entry.text.meaning)} |`,
  );
  return [
    '| variable | default | read by | on AWS (context key) | meaning |',
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

/** docs/deployment.md's table: every context key. */
export function renderContextTable(): string {
  const runtimeRows = runtimeEntries()
    .filter(({ setting }) => setting.context !== undefined)
    .map(
      ({ setting, text }) =>
        `| \`${setting.context}\` | ${cell(shownDefault(defaultTextOf(setting, text.defaultText), '*(none)*'))} | \`${setting.env}\` (${functionsOf(setting)}) | ${cell(text.meaning)} |`,
    );
  const stackRows = stackEntries().map(
    (setting) =>
      `| \`${setting.context}\` | ${cell(shownDefault(defaultTextOf(setting, setting.defaultText), '*(none)*'))} | ${cell(setting.sets)} | ${cell(setting.meaning)} |`,
  );
  return ['| key | default | sets | meaning |', '|---|---|---|---|', ...runtimeRows, ...stackRows].join('\n');
}

/** The generated tables and where they go. */
export const GENERATED_TABLES: readonly GeneratedTable[] = [
  { file: 'docs/reference/configuration.md', id: 'environment', render: renderEnvironmentTable },
  { file: 'docs/deployment.md', id: 'context', render: renderContextTable },
];

/** `document` with the table between its markers replaced; throws when the markers are missing. */
export function withTable(document: string, table: GeneratedTable): string {
  const start = `<!-- settings:${table.id} -->`;
  const end = `<!-- /settings:${table.id} -->`;
  const from = document.indexOf(start);
  const to = document.indexOf(end);
  if (from < 0 || to < from) throw new Error(`${table.file}: no "${start}" ... "${end}" markers`);
  return `${document.slice(0, from + start.length)}\n${table.render()}\n${document.slice(to)}`;
}

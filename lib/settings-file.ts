/**
 * @module settings-file
 * Settings files: one per environment, `environments/<name>.json`, chosen with one context key
 * (`-c environment=<name>`), so the settings a stack is deployed with live in the repository and
 * not on a command line that nothing keeps. A file holds context keys of the catalogue (the same
 * names and values as `-c` or cdk.json), checked by the same schemas.
 *
 * - A production file (`"production": true`) is the only source: a catalogue key also given on
 *   the command line or in cdk.json stops the synth, so a deploy cannot differ from the file.
 * - Another file gives defaults that `-c` may override (a developer's stack).
 * - Without `environment`, the context is read as it is.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONTEXT_KEYS, type ContextReader, StackConfigError } from './stack-config.ts';
import { STACK_SETTINGS } from './stack-settings.ts';

/** The folder of the settings files, relative to the project root. */
export const ENVIRONMENTS_DIR = 'environments';

/** Reads a settings file's text by environment name; undefined when there is none. */
export type SettingsFileLoader = (name: string) => string | undefined;

/** The settings files of a folder, by name (without `.json`). */
export function settingsFileNames(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((file) => file.endsWith('.json'))
    .map((file) => file.slice(0, -'.json'.length))
    .sort();
}

/** A loader over `<projectRoot>/environments/`. */
export function settingsFilesIn(projectRoot: string): SettingsFileLoader {
  return (name) => {
    const path = join(projectRoot, ENVIRONMENTS_DIR, `${name}.json`);
    return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  };
}

/**
 * The context as the stack reads it: `read`, or, with `environment` set, the settings file's
 * values (alone for a production file; under `-c` and cdk.json otherwise). Throws a
 * {@link StackConfigError} naming the file and each problem.
 */
export function withSettingsFile(
  read: ContextReader,
  load: SettingsFileLoader,
  available: () => readonly string[] = () => [],
): ContextReader {
  const parsedName = STACK_SETTINGS.environment.schema.safeParse(read('environment'));
  if (!parsedName.success) {
    throw new StackConfigError(parsedName.error.issues.map((issue) => `environment: ${issue.message}`));
  }
  const name = parsedName.data;
  if (name === undefined) return read;
  const path = `${ENVIRONMENTS_DIR}/${name}.json`;
  const text = load(name);
  if (text === undefined) {
    const names = available();
    throw new StackConfigError([
      `environment: there is no ${path}${names.length > 0 ? ` (there are: ${names.join(', ')})` : ''}`,
    ]);
  }
  let file: unknown;
  try {
    file = JSON.parse(text);
  } catch (error) {
    throw new StackConfigError([`${path}: not valid JSON (${(error as Error).message})`]);
  }
  if (typeof file !== 'object' || file === null || Array.isArray(file)) {
    throw new StackConfigError([`${path}: expected a JSON object of settings`]);
  }
  const values = file as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of Object.keys(values)) {
    if (key === 'environment') problems.push(`${path}: "environment" chooses the file; it cannot be in one`);
    else if (!CONTEXT_KEYS.includes(key)) {
      problems.push(`${path}: "${key}" is not a setting (docs/deployment.md, "Context parameters")`);
    }
  }
  const production = STACK_SETTINGS.production.schema.safeParse(values.production);
  if (production.success && production.data) {
    for (const key of CONTEXT_KEYS) {
      if (key === 'environment' || read(key) === undefined) continue;
      problems.push(
        `${key}: given on the command line or in cdk.json, but a production synth takes its settings only from ` +
          `${path}: put it there`,
      );
    }
  }
  if (problems.length > 0) throw new StackConfigError(problems);
  if (production.success && production.data) {
    return (key) => (key === 'environment' ? name : values[key]);
  }
  return (key) => read(key) ?? values[key];
}

// `eslint .` with a sound cache, for scripts/check.mjs. ESLint's own --cache keys a file by its content alone, which
// is unsound under the type-aware rules: a file's verdict can change when a file it imports changes (a function
// becomes async, and a call to it elsewhere becomes a floating promise). Here a file's key also covers everything
// its types can come from (scripts/lint-keys.mjs says what, and what it does not cover), so an unchanged key means
// an unchanged verdict. Only files that linted with no message at all are cached: a file with an error or a warning
// is linted on every run, so its messages always print. A file keeps its last four clean keys, so that undoing an
// edit or going back to a branch finds it clean still. The files are those `eslint .` lints (walked here, then kept
// when ESLint gives them a config), the output is ESLint's stylish report, and the exit code is ESLint's.
// The cache is STEWARD_LINT_CACHE, else lint.json in STEWARD_CHECK_CACHE, else in node_modules/.cache/steward.
// STEWARD_LINT_VERBOSE=1 names each file linted.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { ESLint } from 'eslint';
import { keysFor, walk } from './lint-keys.mjs';

const CACHE_VERSION = 2;
const KEYS_PER_FILE = 4;

/** The cache path from the environment, resolved against root. */
export function lintCachePath(root, env = process.env) {
  if (env.STEWARD_LINT_CACHE) return resolve(root, env.STEWARD_LINT_CACHE);
  return resolve(root, env.STEWARD_CHECK_CACHE || 'node_modules/.cache/steward', 'lint.json');
}

async function readCache(path) {
  try {
    const cache = JSON.parse(await readFile(path, 'utf8'));
    if (cache.version === CACHE_VERSION) return cache;
  } catch {
    // no cache yet, or an unreadable one: lint everything
  }
  return { version: CACHE_VERSION, clean: {}, parsed: {} };
}

/**
 * Lints the files `eslint .` would lint in root, skipping those whose key is one they linted clean with.
 * Returns ESLint's results for the files linted, their names, and how many were skipped.
 */
export async function lintProject(root, cachePath) {
  const eslint = new ESLint({ cwd: root });
  const files = [];
  for (const file of await walk(root)) if (!(await eslint.isPathIgnored(join(root, file)))) files.push(file);

  const cache = await readCache(cachePath);
  const known = new Map(Object.entries(cache.parsed));
  const scripts = await Promise.all(['lint.mjs', 'lint-keys.mjs'].map((f) => readFile(join(import.meta.dirname, f))));
  const extra = [process.version, ESLint.version, ...scripts.map(String)];
  const { keys, parsed, unsupported } = await keysFor(root, files, { known, extra });
  if (unsupported) console.error(`lint: every file is linted, since the cache cannot follow this: ${unsupported}`);

  const wasClean = (file) => keys !== undefined && (cache.clean[file] ?? []).includes(keys.get(file));
  const toLint = files.filter((file) => !wasClean(file));
  const results = toLint.length > 0 ? await eslint.lintFiles(toLint.map((file) => join(root, file))) : [];

  // A few keys per file, the newest first, so that going back to an earlier content (another branch, an undone
  // edit) finds it still clean. A file that has messages now keeps its earlier keys: they were clean, and still are.
  const clean = {};
  if (keys) {
    const remember = (file) => {
      clean[file] = [keys.get(file), ...(cache.clean[file] ?? []).filter((k) => k !== keys.get(file))];
      clean[file] = clean[file].slice(0, KEYS_PER_FILE);
    };
    for (const file of files) if (cache.clean[file]) clean[file] = cache.clean[file];
    for (const file of files.filter(wasClean)) remember(file);
    for (const result of results) {
      const file = relative(root, result.filePath).split('\\').join('/');
      if (result.messages.length === 0 && keys.has(file)) remember(file);
    }
  }
  await mkdir(dirname(cachePath), { recursive: true });
  const temporary = `${cachePath}.${process.pid}`;
  await writeFile(
    temporary,
    JSON.stringify({ version: CACHE_VERSION, clean, parsed: Object.fromEntries(parsed ?? []) }),
  );
  await rename(temporary, cachePath); // whole or not at all, even if two checks run at once

  return { eslint, results, linted: toLint, skipped: files.length - toLint.length };
}

if (import.meta.filename === process.argv[1]) {
  try {
    const root = process.cwd();
    const { eslint, results, linted, skipped } = await lintProject(root, lintCachePath(root));
    const formatter = await eslint.loadFormatter('stylish');
    process.stdout.write(await formatter.format(results));
    if (process.env.STEWARD_LINT_VERBOSE === '1') for (const file of linted) console.log(`linted ${file}`);
    console.log(`lint: ${linted.length} files linted, ${skipped} unchanged since they last linted clean`);
    process.exitCode = results.some((r) => r.errorCount > 0) ? 1 : 0;
  } catch (error) {
    console.error(error);
    process.exitCode = 2; // as ESLint does when it crashes
  }
}

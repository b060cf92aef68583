// The keys of scripts/lint.mjs's cache: for each file, a hash of everything that can change ESLint's verdict on it.
// A file's verdict under the type-aware rules depends on the types TypeScript gives it, and TypeScript takes those
// from three places only: the files the file imports (transitively), the global declarations of the program (.d.ts
// files, files that are scripts rather than modules, and modules that declare globals or ambient modules or carry
// triple-slash references), and the installed packages with the compiler settings. So a key hashes
//   - the file's content and the content of every project file it reaches through relative specifiers (import,
//     export ... from, import(), require(), import types), including every file each specifier could resolve to;
//   - the global inputs: every .d.ts file, every global TypeScript file as above, every tsconfig*.json, package.json,
//     package-lock.json, the ESLint config file with its own imports, this script and lint.mjs, and the Node and ESLint
//     versions.
// Not covered: packages in node_modules that differ from what package-lock.json says (an `npm link`, a hand edit),
// and rules that read something else (the environment, the clock, files by name); the config has none today.
// Module resolution the keys cannot follow (tsconfig paths, baseUrl or rootDirs, package.json imports, a package
// importing itself by name, absolute specifiers) makes keysFor answer `unsupported`, and then every file is linted.
import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, extname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const sha = (...parts) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('hex');
};

const CODE = /\.(?:[cm]?[jt]s|[jt]sx)$/;
const TYPE_SCRIPT = /\.(?:[cm]?ts|tsx)$/;
const DECLARATION = /\.d\.(?:[cm]?ts)$/;
// What a relative specifier can name, with or without its extension: TypeScript maps ./x.js to ./x.ts, and an
// extensionless path to x.ts, x/index.ts and so on. Every existing candidate counts, so one appearing changes the key.
const STRIP = /\.(?:[cm]?[jt]s|[jt]sx|json)$/;
const EXTENSIONS = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs', '.json'];

/**
 * Every file under root, as paths relative to it, skipping .git and every node_modules. As ESLint's own walk does,
 * it lists a symbolic link as a file and does not follow one to a directory.
 */
export async function walk(root) {
  const files = [];
  const visit = async (dir) => {
    for (const entry of await readdir(join(root, dir), { withFileTypes: true })) {
      const path = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.name === 'node_modules' || path === '.git') continue;
      if (entry.isDirectory()) await visit(path);
      else files.push(path);
    }
  };
  await visit('');
  return files.sort();
}

/** What keying needs from one source text: its specifiers, and whether it declares anything global. */
export function parseSource(path, text) {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false);
  const specifiers = [];
  let global = !ts.isExternalModule(file) || file.referencedFiles.length > 0 || file.typeReferenceDirectives.length > 0;
  global ||= file.libReferenceDirectives.length > 0;
  const literal = (node) => node && ts.isStringLiteralLike(node) && specifiers.push(node.text);
  const visit = (node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) literal(node.moduleSpecifier);
    else if (ts.isExternalModuleReference(node)) literal(node.expression);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) literal(node.argument.literal);
    else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      if (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === 'require')) {
        literal(node.arguments[0]);
      }
    } else if (ts.isModuleDeclaration(node) && (ts.isStringLiteral(node.name) || node.name.text === 'global')) {
      global = true; // `declare module 'x'` or `declare global`: seen by every file of the program
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return { specifiers, global };
}

/**
 * The key of each file in `files` (relative to root) as `keys`, or `unsupported` with the reason when the project
 * resolves modules in a way the keys cannot follow. `known` maps an extension and content hash to parseSource's
 * answer from an earlier run; `parsed` is the same for every file read this time, for the caller to keep.
 */
export async function keysFor(root, files, { known = new Map(), extra = [] } = {}) {
  const parsed = new Map();
  const all = await walk(root);
  const inRoot = new Set(all);
  const content = new Map();
  const contentOf = (path) => {
    if (!content.has(path)) {
      const absolute = resolve(root, path);
      const isFile = inRoot.has(path) || (path.startsWith('..') && existsSync(absolute) && statSync(absolute).isFile());
      content.set(path, isFile ? sha(readFileSync(absolute)) : null);
    }
    return content.get(path);
  };
  // By extension too: the same text parses differently as .ts, .tsx or .js.
  const parse = (path) => {
    const id = `${extname(path)} ${contentOf(path)}`;
    if (!parsed.has(id)) parsed.set(id, known.get(id) ?? parseSource(path, readFileSync(resolve(root, path), 'utf8')));
    return parsed.get(id);
  };

  const pkg = inRoot.has('package.json') ? JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) : {};
  const tsconfigs = all.filter((f) => /^(?:ts|js)config.*\.json$/.test(basename(f)));
  for (const config of tsconfigs) {
    const words = readFileSync(join(root, config), 'utf8').match(/"(?:paths|baseUrl|rootDirs)"/);
    if (words) return { unsupported: `${config} sets ${words[0]}` };
  }
  if (pkg.imports) return { unsupported: 'package.json has "imports"' };

  const edges = new Map();
  const dependencies = (path) => {
    if (edges.has(path)) return edges.get(path);
    const found = [];
    if (CODE.test(path)) {
      for (const specifier of parse(path).specifiers) {
        if (specifier.startsWith('#') || specifier.startsWith('/') || /^[a-z]+:/i.test(specifier)) {
          if (specifier.startsWith('node:')) continue;
          return { unsupported: `${path} imports ${specifier}` };
        }
        if (pkg.name && (specifier === pkg.name || specifier.startsWith(`${pkg.name}/`))) {
          return { unsupported: `${path} imports its own package as ${specifier}` };
        }
        if (!specifier.startsWith('.')) continue; // a package: package-lock.json stands for it
        const target = relative(root, resolve(root, dirname(path), specifier))
          .split(sep)
          .join('/');
        const base = target.replace(STRIP, '');
        found.push(target, `${target}/package.json`);
        found.push(...EXTENSIONS.flatMap((e) => [base + e, target + e, `${target}/index${e}`]));
      }
    }
    const existing = [...new Set(found)].filter((candidate) => contentOf(candidate) !== null);
    edges.set(path, existing);
    return existing;
  };
  // Every file reachable from `start`, itself included, with its content hash.
  const closure = (start) => {
    const seen = new Set([start]);
    const stack = [start];
    while (stack.length > 0) {
      const next = dependencies(stack.pop());
      if (!Array.isArray(next)) return next;
      for (const path of next.filter((p) => !seen.has(p))) {
        seen.add(path);
        stack.push(path);
      }
    }
    return [...seen].sort().map((path) => `${path} ${contentOf(path)}`);
  };

  const globals = all.filter(
    (f) => DECLARATION.test(f) || tsconfigs.includes(f) || (TYPE_SCRIPT.test(f) && parse(f).global),
  );
  const globalParts = [];
  const eslintConfigs = all.filter((f) => /^eslint\.config\.[cm]?[jt]s$/.test(f));
  for (const start of [...globals, 'package.json', 'package-lock.json', ...eslintConfigs]) {
    const reached = contentOf(start) === null ? [`${start} absent`] : closure(start);
    if (!Array.isArray(reached)) return reached;
    globalParts.push(...reached);
  }
  const globalKey = sha(...[...new Set(globalParts)].sort(), ...extra);

  const keys = new Map();
  for (const file of files) {
    const reached = closure(file);
    if (!Array.isArray(reached)) return reached;
    keys.set(file, sha(globalKey, ...reached));
  }
  return { keys, parsed };
}

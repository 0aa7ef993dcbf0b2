// The programs that attnplay's builds, tests, benches and golden scripts run,
// as scripts/ensure-deps.sh lists them (its PROGRAMS table, the one list), and
// the means to keep that list true:
//   programTable()       the table's rows
//   requireProgram(p, s) throws one clear line when program p is missing
//                        ("S needs P (Debian package X): run scripts/ensure-deps.sh T")
//   spawnedPrograms(...) what a source file spawns: JS child_process calls and
//                        Playwright's executablePath, C++ popen/system, Python
//                        subprocess calls, shell command words, CMake find_program
// tests/node/programs.test.mjs compares the second with the first. This is not
// a shell parser: it reads the command position of the repository's own
// scripts, and fails on what it cannot resolve rather than guessing.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../', import.meta.url));
const ensureDeps = join(root, 'scripts/ensure-deps.sh');

/** Rows of ensure-deps.sh's PROGRAMS table: { profiles: [], package, programs: [], check }. */
export function programTable(text = readFileSync(ensureDeps, 'utf8')) {
  const block = /^# BEGIN PROGRAMS$([\s\S]*?)^# END PROGRAMS$/m.exec(text);
  if (!block) throw new Error('scripts/ensure-deps.sh has no "# BEGIN PROGRAMS" ... "# END PROGRAMS" table');
  const rows = block[1].split('\n').filter((line) => line.startsWith('#| ')).slice(1); // after the header row
  return rows.map((line) => {
    const [profiles, pkg, programs, ...check] = line.slice(3).split('|');
    return {
      profiles: profiles.trim().split(','),
      package: pkg.trim(),
      programs: programs.trim() === '-' ? [] : programs.trim().split(/\s+/),
      check: check.join('|').trim(),
    };
  });
}

/** Whether row applies to profile (base and native rows apply to every profile, build rows to all but native). */
export function rowApplies(row, profile) {
  return row.profiles.includes('base') || row.profiles.includes('native') || row.profiles.includes(profile) ||
    (row.profiles.includes('build') && profile !== 'native');
}

/** The row that lists program (a name, /usr/bin/NAME, or python3:MODULE), or undefined. */
export function rowOf(program, table = programTable()) {
  const name = program.includes(':') ? program : program.split('/').pop();
  return table.find((row) => row.programs.includes(name));
}

function onPath(name) {
  const dirs = name.includes('/') ? [''] : (process.env.PATH ?? '').split(delimiter);
  return dirs.some((dir) => {
    try {
      accessSync(dir ? join(dir, name) : name, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * Throws one line naming the package and the command that installs it when
 * program cannot run here. program: a name on PATH, an absolute path, or
 * python3:MODULE (a module of Debian's /usr/bin/python3). suite: who needs it.
 */
export function requireProgram(program, suite) {
  const row = rowOf(program);
  if (!row) throw new Error(`${suite} runs ${program}, which scripts/ensure-deps.sh does not list: add it to its PROGRAMS table`);
  const [python, module] = program.split(':');
  const present = module
    ? spawnSync(`/usr/bin/${python}`, ['-c', `import importlib.util, sys; sys.exit(importlib.util.find_spec(${JSON.stringify(module)}) is None)`]).status === 0
    : onPath(program);
  if (!present) {
    const what = module ? `${python} -m ${module}` : program;
    const profile = row.profiles.find((p) => !['base', 'native', 'build'].includes(p)) ?? 'build';
    throw new Error(`${suite} needs ${what} (Debian package ${row.package}): run scripts/ensure-deps.sh ${profile}`);
  }
}

// --- The scanner ---------------------------------------------------------

const SHELL_WORDS = new Set([
  // bash keywords and builtins: not programs
  'fi', 'for', 'in', 'done', 'case', 'esac', 'function',
  '!', '[[', ']]', '[', 'time', 'cd', 'set', 'echo', 'exit', 'export', 'local', 'read', 'return', 'shift', 'source',
  '.', ':', 'trap', 'true', 'continue', 'break', 'false', 'test', 'printf', 'declare', 'unset', 'wait', 'eval', 'type', 'pushd', 'popd',
]);

// Words that a command follows.
const COMMAND_PREFIXES = new Set(['!', 'if', 'elif', 'while', 'until', 'then', 'else', 'do', 'time', 'exec']);

/** A spawned program's name as the table spells it: basename, or python3:MODULE. */
function normalise(program, args = []) {
  const name = program.split('/').pop();
  if (/^python3?(\.\d+)?$/.test(name) && args[0] === '-m' && args[1]) return `python3:${args[1]}`;
  return name;
}

/** JS string literal at the start of text ('...', "..." or `...` without ${}), or null. */
function literalAt(text) {
  const m = /^(['"`])((?:\\.|(?!\1)[^\\])*)\1/.exec(text);
  if (!m) return null;
  return { value: m[2], template: m[1] === '`' && m[2].includes('${') };
}

/** Whether an expression names a program the project builds (build/...) or Node itself. */
function projectBuilt(expression) {
  return /\bbuild\b/.test(expression) || /execPath/.test(expression);
}

/** How NAME is defined in source (JS const/let/var, or Python NAME = ...), or null. */
function definition(source, name) {
  const m = new RegExp(`(?:\\b(?:const|let|var)\\s+|^\\s*)${name}\\s*=\\s*([^\\n]+)`, 'm').exec(source);
  return m ? m[1] : null;
}

/** Resolves a spawn call's first argument; returns { program } or { built: true } or { unresolved }. */
function resolveArgument(source, argument, seen = new Set()) {
  const text = argument.trim();
  const literal = literalAt(text);
  if (literal) return literal.template || projectBuilt(literal.value) ? { built: true } : { program: literal.value };
  const name = /^(?:str\()?([A-Za-z_$][\w$.]*)\)?/.exec(text)?.[1];
  if (!name) return { unresolved: text.slice(0, 40) };
  if (projectBuilt(name)) return { built: true };
  const base = name.split('.')[0];
  const defined = definition(source, base);
  if (defined === null || seen.has(base)) return { unresolved: name };
  seen.add(base);
  if (projectBuilt(defined)) return { built: true };
  if (/\bvenv\b/.test(defined)) return { program: 'python3:venv' }; // the python of a virtual environment the test made
  const list = /^\[\s*(.*)/.exec(defined.trim());
  return resolveArgument(source, list ? list[1] : defined, seen);
}

/** The literal strings of a JS/Python list starting at text ("[...]"), up to the first non-literal. */
function literalList(text) {
  const m = /^\s*\[([^\]]*)/.exec(text);
  if (!m) return [];
  const out = [];
  for (const item of m[1].split(',')) {
    const lit = literalAt(item.trim());
    if (!lit) break;
    out.push(lit.value);
  }
  return out;
}

function fromJavaScript(source) {
  const found = [];
  const unresolved = [];
  for (const m of source.matchAll(/(?<![.\w$])(spawn|spawnSync|execFile|execFileSync|exec|execSync)\(\s*/g)) {
    const rest = source.slice(m.index + m[0].length);
    const resolved = resolveArgument(source, rest.split(/,|\)/)[0]);
    if (resolved.program) {
      const words = m[1].startsWith('exec') && !m[1].startsWith('execFile') ? resolved.program.split(/\s+/) : [resolved.program];
      const args = words.length > 1 ? words.slice(1) : literalList(rest.slice(rest.indexOf(',') + 1));
      found.push(normalise(words[0], args));
    } else if (resolved.unresolved) unresolved.push(`${m[1]}(${resolved.unresolved}`);
  }
  for (const m of source.matchAll(/executablePath\s*:\s*(['"])([^'"]+)\1/g)) found.push(normalise(m[2]));
  return { found, unresolved };
}

function fromPython(source) {
  const found = [];
  const unresolved = [];
  for (const m of source.matchAll(/\bsubprocess\.(?:run|call|check_call|check_output|Popen)\(\s*/g)) {
    const rest = source.slice(m.index + m[0].length);
    const first = rest.startsWith('[') ? rest.slice(1) : rest;
    const resolved = resolveArgument(source, first.split(/,|\)/)[0]);
    if (resolved.program) found.push(normalise(resolved.program, literalList(`[${first.slice(first.indexOf(',') + 1)}`)));
    else if (resolved.unresolved) unresolved.push(`subprocess(${resolved.unresolved}`);
  }
  for (const m of source.matchAll(/\bos\.system\(\s*(['"])(\S+)/g)) found.push(normalise(m[2]));
  return { found, unresolved };
}

function fromCpp(source) {
  const found = [];
  for (const m of source.matchAll(/\b(?:popen|system)\(\s*"([^"\s]+)/g)) found.push(normalise(m[1]));
  return { found, unresolved: [] };
}

function fromCMake(source) {
  const found = [];
  for (const m of source.matchAll(/\bfind_program\(\s*\w+\s+(?:NAMES\s+)?([\w.+-]+)/g)) found.push(m[1]);
  return { found, unresolved: [] };
}

/** Shell source without line continuations, heredoc bodies and case patterns. */
function shellLines(source) {
  const lines = [];
  let heredocEnd = null;
  let caseDepth = 0;
  for (let line of source.replace(/\\\n/g, ' ').split('\n')) {
    if (heredocEnd !== null) {
      if (line.trim() === heredocEnd) heredocEnd = null;
      continue;
    }
    const heredoc = /<<-?\s*(['"]?)(\w+)\1/.exec(line);
    if (heredoc) heredocEnd = heredoc[2];
    if (/^\s*case\b/.test(line)) {
      line = line.replace(/\bin\s+[^()]*\)/, 'in;'); // a one-line case: its first pattern
      if (!/\besac\b/.test(line)) caseDepth += 1;
    } else if (/^\s*esac\b/.test(line)) caseDepth -= 1;
    else if (caseDepth > 0) line = line.replace(/^\s*[^()]*\)\s*/, ''); // "pattern | pattern)" before the command
    lines.push(line);
  }
  return lines.join('\n');
}

/** The words in command position of a shell script (each simple command's program). */
export function shellCommandWords(source) {
  const text = shellLines(source);
  // Variables set to a plain word (cxx=clang++-14), so that "$cxx" names its program.
  const assigned = new Map([...text.matchAll(/^\s*(?:local\s+)?(\w+)=([\w.+/-]+)\s*$/gm)].map((m) => [m[1], m[2]]));
  const functions = new Set([...text.matchAll(/^\s*([\w-]+)\s*\(\)\s*\{/gm)].map((m) => m[1]));
  const commands = [];
  const stack = [{ words: [], word: '', quoted: false }];
  let quote = null; // null, "'" or '"'
  const top = () => stack[stack.length - 1];
  const endWord = () => {
    const s = top();
    if (s.word === '[[' && !s.quoted) s.inTest = true;
    if (s.word === ']]' && !s.quoted) s.inTest = false;
    if ((s.word || s.quoted) && s.redirect) s.redirect = false;
    else if (s.word || s.quoted) s.words.push({ text: s.word, quoted: s.quoted });
    s.word = '';
    s.quoted = false;
  };
  const endCommand = () => {
    endWord();
    const { words } = top();
    top().words = [];
    top().redirect = false;
    top().inTest = false;
    while (words.length && (/^\w+(\[[^\]]*\])?\+?=/.test(words[0].text) || COMMAND_PREFIXES.has(words[0].text))) words.shift();
    if (words[0]?.text === 'nice') words.splice(0, words[1]?.text === '-n' ? 3 : 1);
    if (words[0]?.text === 'command' && words[1]?.text === '-v') words.splice(0, 2);
    const variable = /^\$\{?(\w+)\}?$/.exec(words[0]?.text ?? '')?.[1];
    const first = variable && assigned.has(variable) ? { text: assigned.get(variable) } : words[0];
    if (!first || first.quoted || first.text.includes('$') || SHELL_WORDS.has(first.text) || functions.has(first.text)) return;
    if (/^\.{0,2}\//.test(first.text) && !first.text.startsWith('/usr/')) return; // ./built or a path of the repository
    commands.push(first.text);
  };
  /** The index of the bracket that closes the one at text[open], by counting open/close. */
  const closing = (open, opener, closer) => {
    let depth = 0;
    for (let j = open; j < text.length; j += 1) {
      if (text[j] === opener) depth += 1;
      else if (text[j] === closer && --depth === 0) return j;
    }
    return text.length - 1;
  };
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quote === "'") {
      if (c === "'") quote = null; else top().word += c;
      continue;
    }
    if (c === '$' && (text[i + 1] === '{' || text.startsWith('((', i + 1))) { // ${parameter} or $((arithmetic)): one word
      const end = closing(i + 1, text[i + 1], text[i + 1] === '{' ? '}' : ')');
      top().word += text.slice(i, end + 1);
      i = end;
      continue;
    }
    if (c === '$' && text[i + 1] === '(') { // command substitution, also inside double quotes
      top().word += '$';
      stack.push({ words: [], word: '', quoted: false, quote });
      quote = null;
      i += 1;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\') { top().word += text[i + 1] ?? ''; i += 1; } else top().word += c;
      continue;
    }
    if (c === "'" || c === '"') { quote = c; top().quoted = true; continue; }
    if (c === '(' && top().word.endsWith('=')) { // name=(array items): one word
      const end = closing(i, '(', ')');
      top().word += text.slice(i, end + 1);
      i = end;
      continue;
    }
    if (top().inTest && '|&<>'.includes(c)) { top().word += c; continue; } // operators inside [[ ... ]]
    if (c === '\\') { top().word += text[i + 1] ?? ''; i += 1; continue; }
    if (c === '#' && !top().word) { while (i < text.length && text[i] !== '\n') i += 1; i -= 1; continue; }
    if (c === ')' && stack.length > 1) {
      endCommand();
      quote = stack.pop().quote;
      top().word += ')';
      continue;
    }
    if (/\s/.test(c) && c !== '\n') { endWord(); continue; }
    if ((c === '>' || c === '<') && text[i + 1] !== '(') { // a redirection: neither its fd nor its target is a command
      if (/^\d+$/.test(top().word) && !top().quoted) top().word = ''; else endWord();
      while ('<>&'.includes(text[i + 1])) i += 1;
      if (/[\d-]/.test(text[i + 1]) && text[i] === '&') { while (/[\d-]/.test(text[i + 1])) i += 1; } else top().redirect = true;
      continue;
    }
    if ('\n;|&(){}<'.includes(c)) { endCommand(); continue; }
    top().word += c;
  }
  endCommand();
  return commands;
}

function fromShell(source) {
  return { found: shellCommandWords(source), unresolved: [] };
}

function fromPackageJson(source) {
  const found = [];
  for (const command of Object.values(JSON.parse(source).scripts ?? {})) found.push(...shellCommandWords(command));
  return { found, unresolved: [] };
}

/**
 * What a file spawns, by its kind: { found: [program], unresolved: [call] }.
 * path decides the reader (.mjs/.js, .py, .cpp/.h, CMakeLists.txt, .sh or a
 * shell script without extension, package.json).
 */
export function spawnedPrograms(path, source) {
  if (path.endsWith('package.json')) return fromPackageJson(source);
  if (/\.(mjs|js)$/.test(path)) return fromJavaScript(source);
  if (path.endsWith('.py')) return fromPython(source);
  if (/\.(cpp|h)$/.test(path)) return fromCpp(source);
  if (path.endsWith('CMakeLists.txt')) return fromCMake(source);
  if (path.endsWith('.sh') || /^#!.*\bbash\b/.test(source)) return fromShell(source);
  return { found: [], unresolved: [] };
}

// The spawned-programs lint: every program that a build, test, bench or golden
// script of this repository runs must be in scripts/ensure-deps.sh's PROGRAMS
// table, under a profile that the script's suite installs (tests/bench:
// bench; tests/golden, tests/tokenizer and models/train: goldens; the rest:
// test). A program that only a hand install provides would otherwise pass on
// one machine and fail on the next (it happened with `jupyter`). The scanner is
// tests/programs.mjs; its own behaviour is pinned first, on sources that must
// be caught.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { programTable, root, rowApplies, shellCommandWords, spawnedPrograms } from '../programs.mjs';

const SCANNED = ['scripts', 'tests', 'models/train', 'cpp', '.ci', 'CMakeLists.txt', 'package.json'];
const SKIPPED_DIRS = new Set(['node_modules', 'models', 'fixtures']);
const SKIPPED_FILES = new Set(['tests/node/programs.test.mjs']); // its sources are the scanner's fixtures

function* files(path) {
  const full = join(root, path);
  if (statSync(full).isDirectory()) {
    for (const entry of readdirSync(full)) {
      if (SKIPPED_DIRS.has(entry)) continue;
      yield* files(join(path, entry));
    }
  } else if (!SKIPPED_FILES.has(path) && /\.(mjs|js|py|cpp|h|sh)$|CMakeLists\.txt$|package\.json$|^\.ci\/run$/.test(path)) {
    yield path;
  }
}

/** The profile whose install a file's programs must be in. */
function profileOf(path) {
  if (path.startsWith('tests/bench/')) return 'bench';
  if (/^(tests\/golden|tests\/tokenizer|models\/train)\//.test(path)) return 'goldens';
  return 'test';
}

test('the scanner finds what a script spawns, in each language', () => {
  const js = `import { spawnSync } from 'node:child_process';
    const cli = fileURLToPath(new URL('../../build/native/attnplay', import.meta.url));
    spawnSync('jupyter', ['nbconvert', '--execute']);
    spawnSync('/usr/bin/python3', ['-m', 'nbconvert', '--to', 'html']);
    execFileSync('wasm-dis', [path]); execFileSync(process.execPath, [script]); spawnSync(cli, ['info']);
    /x(\\d)/.exec(text); chromium.launch({ executablePath: '/usr/bin/chromium' }); spawn(mystery, []);
    const venvPython = join(venv, 'bin', 'python'); spawnSync(venvPython, ['-m', 'pip', 'install']);`;
  assert.deepEqual(spawnedPrograms('a.mjs', js), { found: ['jupyter', 'python3:nbconvert', 'wasm-dis', 'python3:venv', 'chromium'], unresolved: ['spawn(mystery'] });
  const py = 'CLI = REPO / "build" / "native" / "attnplay"\nsubprocess.run(["spm_train", "--input=x"])\nsubprocess.run([str(CLI), "info"])';
  assert.deepEqual(spawnedPrograms('a.py', py).found, ['spm_train']);
  assert.deepEqual(spawnedPrograms('a.cpp', 'popen("bzip2 -dc /usr/share/x.bz2", "r")').found, ['bzip2']);
  const sh = `#!/usr/bin/env bash
    set -euo pipefail  # a comment: rm -rf /
    cxx=clang++-14
    build() { local name="$1"; "$cxx" -o "$name"; }
    case "$x" in
      a | b) make -j2 ;;
      *) echo "usage" >&2; exit 2 ;;
    esac
    for f in a b; do cmake --build "$f"; done
    case "$f" in a | b) ctest ;; esac
    missing=$(dpkg-query -W x | grep -c ok) && jupyter nbconvert --execute \\
      x.ipynb
    while IFS='|' read -r a b; do nice -n 10 spm_train --x; done < <(build one)
    [[ -z "$(find cpp -newer x)" ]] || ./build/fuzz_x && node scripts/x.mjs
    /usr/bin/python3 - <<'PY'
    import os; os.system("never")
    PY
    emcc --version | sed 's/#//'`;
  assert.deepEqual(shellCommandWords(sh), ['clang++-14', 'make', 'cmake', 'ctest', 'dpkg-query', 'grep', 'jupyter', 'spm_train', 'find', 'node', '/usr/bin/python3', 'emcc', 'sed']);
  assert.deepEqual(spawnedPrograms('package.json', '{"scripts": {"test": "bash scripts/a.sh && node x.mjs"}}').found, ['bash', 'node']);
});

test('the table lists the nbconvert module, not the jupyter command that Debian\'s python3-nbconvert lacks', () => {
  const table = programTable();
  assert.ok(table.some((row) => row.programs.includes('python3:nbconvert') && row.package === 'python3-nbconvert'));
  assert.ok(!table.some((row) => row.programs.includes('jupyter')));
});

test('every program a build, test, bench or golden script spawns is in ensure-deps.sh, under its profile', () => {
  const table = programTable();
  const problems = [];
  let scanned = 0;
  for (const top of SCANNED) {
    for (const path of files(top)) {
      scanned += 1;
      const { found, unresolved } = spawnedPrograms(path, readFileSync(join(root, path), 'utf8'));
      for (const call of unresolved) problems.push(`${path}: cannot tell what ${call}...) runs; name the program in a literal or a build/ path`);
      const profile = profileOf(path);
      for (const program of found) {
        const name = program.includes(':') ? program : program.split('/').pop();
        const rows = table.filter((row) => row.programs.includes(name));
        if (rows.length === 0) problems.push(`${path}: runs ${program}, which scripts/ensure-deps.sh's PROGRAMS table does not list`);
        else if (!rows.some((row) => rowApplies(row, profile))) {
          problems.push(`${path}: runs ${program}, listed for ${rows.map((r) => r.profiles.join(',')).join('; ')} but not for profile ${profile}`);
        }
      }
    }
  }
  assert.ok(scanned > 100, `scanned ${scanned} files`);
  assert.deepEqual(problems, []);
});

test('npm test, bench and start run ensure-deps.sh with their own profile', () => {
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  assert.equal(scripts.test, 'bash scripts/test.sh');
  assert.match(readFileSync(join(root, 'scripts/test.sh'), 'utf8'), /\bbash scripts\/ensure-deps\.sh test\b/);
  assert.match(scripts.bench, /ensure-deps\.sh bench\b/);
  assert.match(scripts.start, /ensure-deps\.sh build\b/);
});

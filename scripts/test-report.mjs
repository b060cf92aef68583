// Reads a vitest JSON report (`vitest run --reporter=json --outputFile.json=<file>`) for .ci/run:
//   node scripts/test-report.mjs counts <file>       "<passed> <failed> <skipped>", skipped being pending plus todo
//   node scripts/test-report.mjs skipped <file>      each skipped or todo test, "  <file>: <full name>"
//   node scripts/test-report.mjs slowest <file> <n>  the n slowest test files, "  <seconds> s  <file>", slowest first
//   node scripts/test-report.mjs failed <file>       each failed test, "  <file>: <full name>", then the first lines of
//                                                    its error; and each file that failed outside any test (an import,
//                                                    a hook), with its message
// A file's time is from its start to its end in the report, as vitest measured it. Paths are relative to the
// working folder. Exits 1, saying why on stderr, when the report cannot be read.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const [mode, file, count] = process.argv.slice(2);

let report;
try {
  report = JSON.parse(readFileSync(file ?? '', 'utf8'));
} catch (error) {
  console.error(`test-report: cannot read the vitest report ${file}: ${error.message}`);
  process.exit(1);
}

const files = report.testResults ?? [];
const path = (result) => relative(process.cwd(), result.name);

if (mode === 'counts') {
  console.log(`${report.numPassedTests} ${report.numFailedTests} ${report.numPendingTests + report.numTodoTests}`);
} else if (mode === 'skipped') {
  for (const result of files) {
    for (const test of result.assertionResults ?? []) {
      // vitest writes a skipped test as "skipped" (older versions: "pending") and a todo as "todo".
      if (['skipped', 'pending', 'todo'].includes(test.status)) console.log(`  ${path(result)}: ${test.fullName}`);
    }
  }
} else if (mode === 'slowest') {
  const slowest = files
    .map((result) => ({ path: path(result), seconds: (result.endTime - result.startTime) / 1000 }))
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, Number(count));
  const width = Math.max(0, ...slowest.map((f) => f.seconds.toFixed(1).length));
  for (const f of slowest) console.log(`  ${f.seconds.toFixed(1).padStart(width)} s  ${f.path}`);
} else if (mode === 'failed') {
  // CI keeps only the end of its output, so the names of what failed are printed again there.
  const firstLines = (text) =>
    String(text ?? '')
      .split('\n')
      .map((line) => line.trimEnd())
      .filter((line) => line.trim() !== '')
      .slice(0, 4)
      .map((line) => `      ${line.slice(0, 300)}`)
      .join('\n');
  for (const result of files) {
    const failedTests = (result.assertionResults ?? []).filter((test) => test.status === 'failed');
    for (const test of failedTests) {
      console.log(`  ${path(result)}: ${test.fullName}`);
      if (test.failureMessages?.length) console.log(firstLines(test.failureMessages[0]));
    }
    if (result.status === 'failed' && failedTests.length === 0) {
      console.log(`  ${path(result)}: the file failed outside its tests`);
      console.log(firstLines(result.message));
    }
  }
} else {
  console.error(
    'usage: node scripts/test-report.mjs counts|skipped|failed <report.json>, or slowest <report.json> <n>',
  );
  process.exit(1);
}

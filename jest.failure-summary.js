// A Jest reporter that appends every failed test (name, file, the first lines of its failure) to
// `$SLUICE_TEST_LOGS/failures.txt`. CI shows only the tail of a run's output, so scripts/test-all.sh
// prints this file last: the name of what failed must not scroll away behind the replicas' logs.
const { appendFileSync, mkdirSync } = require('node:fs');
const { join, relative } = require('node:path');

const LINES_PER_FAILURE = 12;
// Jest's failure messages carry terminal colours; the summary is read as plain text.
const ANSI = /\u001b\[[0-9;]*m/g;

function firstLines(message) {
  return message.replace(ANSI, '').split('\n').slice(0, LINES_PER_FAILURE).join('\n');
}

class FailureSummaryReporter {
  onTestResult(_test, result) {
    const directory = process.env.SLUICE_TEST_LOGS;
    if (!directory) return;
    const file = relative(process.cwd(), result.testFilePath);
    const entries = [];
    if (result.testExecError) {
      entries.push(
        `✕ ${file} (the file could not run)\n${firstLines(result.testExecError.message)}`,
      );
    }
    for (const test of result.testResults) {
      if (test.status !== 'failed') continue;
      entries.push(`✕ ${file} › ${test.fullName}\n${firstLines(test.failureMessages.join('\n'))}`);
    }
    if (entries.length === 0) return;
    mkdirSync(directory, { recursive: true });
    appendFileSync(join(directory, 'failures.txt'), `${entries.join('\n\n')}\n\n`);
  }
}

module.exports = FailureSummaryReporter;

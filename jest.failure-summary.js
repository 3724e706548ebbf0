// A Jest reporter that appends every failed test (name, file, the first lines of its failure) to
// `$SLUICE_TEST_LOGS/failures.txt`, each after its own evidence: what the broker held behind a
// read that came short, its replicas' own warnings and errors, and the tail of their logs (apps/processor/test/cluster.ts saves
// them and names their test in `clusters.tsv`). CI shows only the tail of a run's output, so
// scripts/test-all.sh prints this file last, and the name of what failed comes last in each entry.
const { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync } = require('node:fs');
const { join, relative } = require('node:path');

const LINES_PER_FAILURE = 12;
const LOG_LINES_PER_REPLICA = 20;
const OWN_WARNINGS_PER_REPLICA = 12;
const LOG_LINE_CHARS = 260;
// Jest's failure messages carry terminal colours; the summary is read as plain text.
const ANSI = /\u001b\[[0-9;]*m/g;
// Said by every transactional producer as it is created: no evidence of anything.
const NOISE = /Limiting retries for the idempotent producer/;
// Fields every line of a replica's log repeats.
const REPEATED = /"(service|time|processor_id|component|logger)":("[^"]*"|\d+),/g;

function firstLines(message) {
  return message.replace(ANSI, '').split('\n').slice(0, LINES_PER_FAILURE).join('\n');
}

function read(file) {
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
}

/** The prefixes of the installations `fullName` ran (cluster.ts appends one line per teardown). */
function prefixesOf(directory, fullName) {
  return read(join(directory, 'clusters.tsv'))
    .split('\n')
    .map((line) => line.split('\t'))
    .filter(([prefix, test]) => prefix && test === fullName)
    .map(([prefix]) => prefix);
}

function replicaLogTail(file) {
  return read(file)
    .split('\n')
    .filter((line) => line && !NOISE.test(line))
    .slice(-LOG_LINES_PER_REPLICA)
    .map((line) => line.replace(REPEATED, '').slice(0, LOG_LINE_CHARS));
}

/**
 * The replica's own warnings and errors (kafkajs' left out), each message once, with how often
 * it came and the first error's message: what happened earlier than the last lines reach, such
 * as a hanging transaction ended, or refused, after a broker restart.
 */
function ownWarnings(file) {
  const byMessage = new Map();
  for (const line of read(file).split('\n')) {
    if (!line.startsWith('{') || line.includes('"component":"kafkajs"')) continue;
    const level = Number(/"level":(\d+)/.exec(line)?.[1] ?? 0);
    if (level < 40) continue;
    const message = /"msg":"((?:[^"\\]|\\.)*)"/.exec(line)?.[1] ?? '(no msg)';
    const error = /"message":"((?:[^"\\]|\\.)*)"/.exec(line)?.[1];
    const seen = byMessage.get(message);
    if (seen) seen.count += 1;
    else byMessage.set(message, { count: 1, level, error });
  }
  return [...byMessage]
    .slice(0, OWN_WARNINGS_PER_REPLICA)
    .map(([message, { count, level, error }]) =>
      `${count}× ${level >= 50 ? 'error' : 'warn'} ${message}${error ? ` (${error})` : ''}`.slice(
        0,
        LOG_LINE_CHARS,
      ),
    );
}

function evidence(directory, fullName) {
  const names = existsSync(directory) ? readdirSync(directory) : [];
  const sections = [];
  for (const prefix of prefixesOf(directory, fullName)) {
    const shortReads = read(join(directory, `${prefix}.short-reads.txt`));
    if (shortReads) sections.push(shortReads);
    for (const name of names.filter((n) => n.startsWith(`${prefix}.`) && n.endsWith('.log'))) {
      const warnings = ownWarnings(join(directory, name));
      if (warnings.length > 0)
        sections.push(`--- ${name}: its own warnings and errors\n${warnings.join('\n')}`);
      sections.push(`--- ${name}: last lines\n${replicaLogTail(join(directory, name)).join('\n')}`);
    }
  }
  return sections.join('\n');
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
      const before = evidence(directory, test.fullName);
      entries.push(
        `${before ? `${before}\n` : ''}✕ ${file} › ${test.fullName}\n${firstLines(test.failureMessages.join('\n'))}`,
      );
    }
    if (entries.length === 0) return;
    mkdirSync(directory, { recursive: true });
    appendFileSync(join(directory, 'failures.txt'), `${entries.join('\n\n')}\n\n`);
  }
}

module.exports = FailureSummaryReporter;

import { DEFAULT_PROCESSOR_GROUP } from '@sluice/contracts';
import { Command, InvalidArgumentError, Option } from 'commander';

import { AdminClient } from './admin-client';
import { APPS, runAcls } from './commands/acls';
import { runApply } from './commands/apply';
import { runPreview, parseLookupSpec } from './commands/preview';
import type { LookupSpec } from './commands/preview';
import { runDelete, runGet, runReplay, runReset } from './commands/pipelines-commands';
import { runProduce } from './commands/produce';
import { runStats } from './commands/stats';
import { runTail } from './commands/tail';
import { runValidate, validateDocuments } from './commands/validate';
import {
  definitionRules,
  kafkaBrokers,
  kafkaSecurity,
  readEnvironment,
  sourceTopics,
  topicPrefix,
} from './environment';
import { CliError } from './errors';
import { readDefinitionDocuments } from './io/definition-files';
import { outputFormat, stdoutPrinter } from './output/printer';
import type { Printer } from './output/printer';

const collect = (value: string, previous: string[]) => [...previous, value];

/** Warnings go to stderr, so that a command's output stays what it prints on stdout. */
const warn = (line: string) => process.stderr.write(`warning: ${line}\n`);

function positiveInteger(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed <= 0)
    throw new InvalidArgumentError('must be a positive integer');
  return parsed;
}

function positiveNumber(value: string): number {
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0)
    throw new InvalidArgumentError('must be a positive number');
  return parsed;
}

const outputOption = () =>
  new Option('-o, --output <format>', 'json or yaml instead of a table').choices(['json', 'yaml']);

/** The `sluice` command line (docs/design.md §8). The environment says where the admin and Kafka are. */
export function buildProgram(out: Printer = stdoutPrinter): Command {
  const admin = () => {
    const env = readEnvironment();
    return new AdminClient(env.adminUrl, env.adminToken);
  };
  const program = new Command('sluice')
    .description(
      'Drive Sluice: pipelines over the admin API (SLUICE_URL, SLUICE_ADMIN_TOKEN), events and results on Kafka (KAFKA_BROKERS)',
    )
    .showHelpAfterError('(sluice --help lists the commands)')
    .configureOutput({ outputError: (text, write) => write(text) });

  program
    .command('apply')
    .description(
      'create or update pipelines from YAML or JSON files (several documents per file are fine)',
    )
    .requiredOption(
      '-f, --filename <path>',
      'a file, a directory, or - for stdin (repeatable)',
      collect,
      [],
    )
    .option('-R, --recursive', 'read directories’ subdirectories too', false)
    .option('--dry-run', 'say what would change, change nothing', false)
    .option(
      '--replay-from <time>',
      'an updated pipeline also reprocesses its sources from here (earliest or an ISO-8601 time)',
    )
    .action(
      async (options: {
        filename: string[];
        recursive: boolean;
        dryRun: boolean;
        replayFrom?: string;
      }) => {
        const documents = validateDocuments(
          readDefinitionDocuments(options.filename, { recursive: options.recursive }),
          definitionRules(),
          warn,
        );
        await runApply(
          admin(),
          documents,
          { dryRun: options.dryRun, replayFrom: options.replayFrom },
          out,
        );
      },
    );

  program
    .command('get')
    .description('list pipelines, or show one by name or id')
    .argument('[pipeline]', 'name or id')
    .addOption(outputOption())
    .action(async (reference: string | undefined, options: { output?: string }) => {
      await runGet(admin(), reference, outputFormat(options.output), out);
    });

  program
    .command('delete')
    .description('delete a pipeline (its history stays readable; its topics stay)')
    .argument('<pipeline>', 'name or id')
    .action(async (reference: string) => runDelete(admin(), reference, out));

  program
    .command('validate')
    .description('check definitions offline with the admin’s rules; exit code 1 if any is invalid')
    .requiredOption(
      '-f, --filename <path>',
      'a file, a directory, or - for stdin (repeatable)',
      collect,
      [],
    )
    .option('-R, --recursive', 'read directories’ subdirectories too', false)
    .action((options: { filename: string[]; recursive: boolean }) =>
      runValidate(
        readDefinitionDocuments(options.filename, { recursive: options.recursive }),
        definitionRules(),
        out,
        warn,
      ),
    );

  program
    .command('preview')
    .description('run a definition over events in the admin’s reference run; nothing is stored')
    .requiredOption('-f, --filename <path>', 'the pipeline definition')
    .requiredOption('--events <file.jsonl>', 'events, one JSON envelope per line')
    .option(
      '--lookup <source=file.jsonl[:key]>',
      'a lookup table for enrich: rows keyed by a field (default id); repeatable',
      collect,
      [],
    )
    .addOption(outputOption())
    .action(
      async (options: { filename: string; events: string; lookup: string[]; output?: string }) => {
        const documents = validateDocuments(
          readDefinitionDocuments([options.filename]),
          definitionRules(),
          warn,
        );
        if (documents.length !== 1) {
          throw new CliError(
            `preview takes one definition; ${options.filename} holds ${documents.length}`,
          );
        }
        const lookups: LookupSpec[] = options.lookup.map(parseLookupSpec);
        await runPreview(
          admin(),
          documents[0]!,
          options.events,
          lookups,
          outputFormat(options.output),
          out,
        );
      },
    );

  program
    .command('stats')
    .description('counters of every pipeline, or of one with its processors')
    .argument('[pipeline]', 'name or id')
    .addOption(outputOption())
    .addOption(
      new Option('-w, --watch [seconds]', 'refresh until Ctrl-C (every 2 s by default)').argParser(
        positiveNumber,
      ),
    )
    .action(
      async (
        reference: string | undefined,
        options: { output?: string; watch?: number | true },
      ) => {
        const watchSeconds = options.watch === true ? 2 : options.watch;
        await runStats(
          admin(),
          reference,
          { format: outputFormat(options.output), watchSeconds },
          out,
        );
      },
    );

  program
    .command('reset')
    .description('clear a pipeline’s state and counters on every processor')
    .argument('<pipeline>', 'name or id')
    .action(async (reference: string) => runReset(admin(), reference, out));

  program
    .command('replay')
    .description(
      'reprocess a pipeline alone from a time or its sources’ earliest records, in a new state epoch',
    )
    .argument('<pipeline>', 'name or id')
    .requiredOption('--from <time>', 'earliest, or an ISO-8601 time such as 2026-11-01T00:00:00Z')
    .action(async (reference: string, options: { from: string }) =>
      runReplay(admin(), reference, options.from, out),
    );

  program
    .command('tail')
    .description('print a topic’s committed records as they arrive (read_committed)')
    .argument('<topic>')
    .option('--from-beginning', 'start at the oldest record instead of new ones', false)
    .option('-n, --max <count>', 'stop after this many records', positiveInteger)
    .option('--idle-exit <seconds>', 'stop after this long without a record', positiveNumber)
    .option('-o, --output <format>', 'json: one JSON object per record')
    .action(
      async (
        topic: string,
        options: { fromBeginning: boolean; max?: number; idleExit?: number; output?: string },
      ) => {
        if (options.output !== undefined && options.output !== 'json') {
          throw new CliError('tail prints records pretty, or as JSON lines with -o json');
        }
        await runTail(
          topic,
          {
            brokers: kafkaBrokers(),
            security: kafkaSecurity(),
            topicPrefix: topicPrefix(),
            fromBeginning: options.fromBeginning,
            max: options.max,
            idleExitMs: options.idleExit === undefined ? undefined : options.idleExit * 1000,
            json: options.output === 'json',
          },
          out,
        );
      },
    );

  program
    .command('acls')
    .description('print the kafka-acls commands that grant one app exactly what it needs')
    .argument('<app>', APPS.join(' | '))
    .requiredOption('--principal <principal>', "the app's Kafka principal, e.g. User:processor")
    .option('--output <topic>', "a pipeline's output topic (repeat for each)", collect, [])
    .option('--table <topic>', 'an enrich lookup table (repeat for each)', collect, [])
    .option('--bootstrap <servers>', 'kafka-acls --bootstrap-server', '$KAFKA_BROKERS')
    .option('--command-config <file>', "kafka-acls --command-config: the operator's client")
    .addHelpText(
      'after',
      '\nNames come from SLUICE_TOPIC_PREFIX, CONSUMER_GROUP and SOURCE_TOPICS (defaults as the apps have them).',
    )
    .action(
      (
        app: string,
        options: {
          principal: string;
          output: string[];
          table: string[];
          bootstrap: string;
          commandConfig?: string;
        },
      ) =>
        runAcls(
          app,
          {
            principal: options.principal,
            topicPrefix: topicPrefix(),
            consumerGroup: (process.env['CONSUMER_GROUP'] ?? '').trim() || DEFAULT_PROCESSOR_GROUP,
            sourceTopics: sourceTopics(),
            outputs: options.output,
            tables: options.table,
            bootstrap: options.bootstrap,
            commandConfig: options.commandConfig,
          },
          out,
        ),
    );

  program
    .command('produce')
    .description('produce a JSONL file to a topic, keyed by a field of each line')
    .requiredOption('-f, --filename <file.jsonl>', 'one JSON object per line, or - for stdin')
    .option('-t, --topic <topic>', 'the topic', 'events')
    .option('-k, --key <field>', 'the top-level field that keys each record', 'entity_id')
    .option('--batch <count>', 'records per request', positiveInteger, 1000)
    .option('--partitions <count>', 'partitions, if the topic must be created', positiveInteger, 6)
    .option('--compact', 'create the topic compacted (a lookup table for enrich)', false)
    .option('--no-progress', 'no progress bar')
    .action(
      async (options: {
        filename: string;
        topic: string;
        key: string;
        batch: number;
        partitions: number;
        compact: boolean;
        progress: boolean;
      }) => {
        await runProduce(
          options.filename,
          {
            brokers: kafkaBrokers(),
            security: kafkaSecurity(),
            topic: options.topic,
            keyField: options.key,
            batchSize: options.batch,
            partitions: options.partitions,
            compact: options.compact,
            progress: options.progress && process.stderr.isTTY === true,
          },
          out,
        );
      },
    );

  return program;
}

// `sluice acls <app>`: the kafka-acls commands that grant one Sluice app exactly what it needs
// on this installation's names (README, "Kafka ACLs"), from the same list the least-privilege
// test grants. Prints; applies nothing (the operator's own client does, with its own rights).
import { adminAcls, cliAcls, kafkaAclsCommand, processorAcls, topicsJobAcls } from '@sluice/kafka';
import type { AclGrant, SluiceApp } from '@sluice/kafka';

import { CliError } from '../errors';
import type { Printer } from '../output/printer';

export const APPS: readonly SluiceApp[] = ['processor', 'admin', 'cli', 'topics-job'];

export interface AclsOptions {
  principal: string;
  topicPrefix: string;
  consumerGroup: string;
  sourceTopics: string[];
  outputs: string[];
  tables: string[];
  bootstrap: string;
  commandConfig: string | undefined;
}

export function grantsFor(app: string, options: AclsOptions): AclGrant[] {
  const names = {
    topicPrefix: options.topicPrefix,
    consumerGroup: options.consumerGroup,
    sourceTopics: options.sourceTopics,
    outputs: options.outputs,
    tables: options.tables,
  };
  switch (app) {
    case 'processor':
      return processorAcls(names);
    case 'admin':
      return adminAcls(names);
    case 'cli':
      return cliAcls({
        topicPrefix: options.topicPrefix,
        produces: [...options.sourceTopics, ...options.tables],
        tails: options.outputs,
      });
    case 'topics-job':
      return topicsJobAcls(names);
    default:
      throw new CliError(`acls is for one of ${APPS.join(', ')}, not "${app}"`);
  }
}

/** Each grant as a comment saying why, then its command; an optional one commented out. */
export function runAcls(app: string, options: AclsOptions, out: Printer): void {
  if (!/^User:.+/.test(options.principal))
    throw new CliError(`--principal must be a Kafka principal such as User:${app}`);
  for (const grant of grantsFor(app, options)) {
    const command = kafkaAclsCommand(options.principal, grant, options);
    out.line(`# ${grant.optional ? 'optional: ' : ''}${grant.why}`);
    out.line(grant.optional ? `# ${command}` : command);
  }
}

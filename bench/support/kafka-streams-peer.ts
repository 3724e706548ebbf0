// Running the Kafka Streams peers (bench/peers/kafka-streams) beside Sluice: building them once
// with Maven, starting one with plain `java`, and knowing when its group has committed.
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';

import { sleep } from '@sluice/testing';
import type { Admin } from 'kafkajs';

import { fmt, log, notCommitted } from './kafka-bench';

export const PEER = join(__dirname, '..', 'peers', 'kafka-streams');

export function buildPeer(): void {
  log('building the Kafka Streams peer (mvn package)…');
  execFileSync('mvn', ['-q', '-B', '-f', join(PEER, 'pom.xml'), 'package'], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

export interface Peer {
  child: ChildProcess;
  /** When it consumed its first record (epoch ms; 0 before). */
  firstRecordAt(): number;
}

/** Starts the peer's `mainClass` with `env`; its JSON lines on stdout are followed. */
export function startPeer(mainClass: string, env: Record<string, string>): Peer {
  const classpath = [
    join(PEER, 'target', 'kafka-streams-peer-1.jar'),
    join(PEER, 'target', 'lib', '*'),
  ];
  const child = spawn('java', ['-cp', classpath.join(':'), `dev.sluice.peer.${mainClass}`], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let firstRecordAt = 0;
  child.stdout!.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) {
      if (!line.startsWith('{')) continue;
      const entry = JSON.parse(line) as { event: string; time?: number; state?: string };
      if (entry.event === 'first_record') firstRecordAt = entry.time!;
      if (entry.event === 'state') log(`  kafka streams: ${entry.state}`);
    }
  });
  return { child, firstRecordAt: () => firstRecordAt };
}

/** Waits until `group` has committed every record of `watched`, logging progress. */
export async function untilCommitted(
  admin: Admin,
  label: string,
  group: string,
  watched: () => Promise<string[]> | string[],
): Promise<number> {
  let lastReport = 0;
  for (;;) {
    const behind = await notCommitted(admin, group, await watched());
    if (behind === 0) return Date.now();
    if (Date.now() - lastReport > 2000) {
      lastReport = Date.now();
      log(`  ${label}: ${fmt(behind)} records not committed yet`);
    }
    await sleep(200);
  }
}

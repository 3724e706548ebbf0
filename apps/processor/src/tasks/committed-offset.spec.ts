import type { Admin } from 'kafkajs';
import pino from 'pino';

import { CommittedOffsetReader, lowerFloorForMove } from './committed-offset';
import type { PartitionMemory } from './committed-offset';
import type { TaskProducer } from './task-producer';
import { TransactionJournal } from './transaction-journal';

const memoryAt = (acknowledged: string | undefined): PartitionMemory => ({
  acknowledged,
  journal: new TransactionJournal(),
});

/** An admin whose group holds `offset` for orders/0, stable. */
const adminHolding = (offset: string) =>
  ({
    fetchOffsets: () =>
      Promise.resolve([
        { topic: 'orders', partitions: [{ partition: 0, offset, metadata: null }] },
      ]),
  }) as unknown as Admin;

const readerOf = (admin: Admin, memory: PartitionMemory, producer = {} as TaskProducer) =>
  new CommittedOffsetReader({
    admin,
    consumerGroup: 'unit.processor',
    topic: 'orders',
    partition: 0,
    logger: pino({ level: 'silent' }),
    memory,
    producer,
    writtenPartitions: () => Promise.resolve([]),
  });

describe('lowerFloorForMove', () => {
  it('lowers the acknowledged floor to a target behind it, and keeps it for one ahead', () => {
    const back = memoryAt('50');
    lowerFloorForMove(back, '40');
    expect(back.acknowledged).toBe('40');

    const ahead = memoryAt('50');
    lowerFloorForMove(ahead, '60');
    expect(ahead.acknowledged).toBe('50');

    const none = memoryAt(undefined);
    lowerFloorForMove(none, '40');
    expect(none.acknowledged).toBeUndefined();
  });

  it('compares offsets as numbers, not as strings', () => {
    const memory = memoryAt('9');
    lowerFloorForMove(memory, '10');
    expect(memory.acknowledged).toBe('9');
  });

  it('lets a resume read a move back whose answer was lost (the group holds the target)', async () => {
    const memory = memoryAt('50');
    lowerFloorForMove(memory, '40');
    await expect(readerOf(adminHolding('40'), memory).read()).resolves.toEqual({
      offset: '40',
      metadata: undefined,
    });
  });
});

describe('CommittedOffsetReader.readAfterFence', () => {
  it('after the fence, refuses to commit a pending offset commit again when its transaction committed no offset of the task', async () => {
    // decideHangingCommit commits such a transaction again (a replica's commits many offsets,
    // and its journal keeps none); a task's own commit must carry the offset it resumes from.
    const unstable = Object.assign(new Error('There are unstable offsets'), {
      type: 'UNSTABLE_OFFSET_COMMIT',
      retriable: true,
    });
    const admin = { fetchOffsets: () => Promise.reject(unstable) } as unknown as Admin;
    const memory = memoryAt(undefined);
    memory.journal.begin(2);
    memory.journal.committing(undefined);
    memory.journal.acknowledged();
    const reader = readerOf(admin, memory, {
      identity: () => undefined,
    } as unknown as TaskProducer);
    await expect(reader.readAfterFence()).rejects.toThrow(
      'the transaction committed no offset of this task',
    );
  });
});

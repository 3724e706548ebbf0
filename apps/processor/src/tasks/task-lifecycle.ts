// A task's lifecycle, as Kafka Streams' tasks have one: every change of state is checked, so a
// task cannot process while it restores, or commit after it was closed, by a loose flag left set.
//
//   created ──► restoring ──► running ──► suspended ──► restoring …
//      │            │            │            │
//      └────────────┴────────────┴────────────┴──► closed
//
// restoring: fencing the previous owner, reading the committed offset, rebuilding state.
// suspended: the partition is still ours after a rebalance or a consumer restart, but the
// consumer's position is the group's again: the task re-checks before it processes anything.
export const TASK_STATES = ['created', 'restoring', 'running', 'suspended', 'closed'] as const;
export type TaskState = (typeof TASK_STATES)[number];

const NEXT: Record<TaskState, readonly TaskState[]> = {
  created: ['restoring', 'closed'],
  restoring: ['running', 'closed'],
  running: ['suspended', 'closed'],
  suspended: ['restoring', 'closed'],
  closed: [],
};

export class IllegalTaskTransition extends Error {
  override readonly name = 'IllegalTaskTransition';
  constructor(
    readonly task: string,
    readonly from: TaskState,
    readonly to: TaskState,
  ) {
    super(`task ${task} cannot go from ${from} to ${to}`);
  }
}

export class TaskLifecycle {
  private current: TaskState = 'created';

  constructor(private readonly task: string) {}

  get state(): TaskState {
    return this.current;
  }

  is(...states: TaskState[]): boolean {
    return states.includes(this.current);
  }

  canMoveTo(to: TaskState): boolean {
    return NEXT[this.current].includes(to);
  }

  moveTo(to: TaskState): void {
    if (!this.canMoveTo(to)) throw new IllegalTaskTransition(this.task, this.current, to);
    this.current = to;
  }
}

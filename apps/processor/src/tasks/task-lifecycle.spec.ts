import { IllegalTaskTransition, TASK_STATES, TaskLifecycle } from './task-lifecycle';
import type { TaskState } from './task-lifecycle';

function at(...path: TaskState[]): TaskLifecycle {
  const lifecycle = new TaskLifecycle('events/0');
  for (const state of path) lifecycle.moveTo(state);
  return lifecycle;
}

describe('TaskLifecycle', () => {
  it('goes created → restoring → running → suspended → restoring → running → closed', () => {
    const lifecycle = at('restoring', 'running', 'suspended', 'restoring', 'running', 'closed');
    expect(lifecycle.state).toBe('closed');
  });

  it('can be closed from every state but closed', () => {
    for (const path of [
      [],
      ['restoring'],
      ['restoring', 'running'],
      ['restoring', 'running', 'suspended'],
    ] as TaskState[][]) {
      expect(() => at(...path, 'closed')).not.toThrow();
    }
    expect(() => at('closed', 'closed')).toThrow(IllegalTaskTransition);
  });

  it('refuses to run without restoring first, and to restart once closed', () => {
    expect(() => at('running')).toThrow('task events/0 cannot go from created to running');
    expect(() => at('restoring', 'running', 'suspended', 'running')).toThrow(
      'cannot go from suspended to running',
    );
    for (const to of TASK_STATES) expect(at('closed').canMoveTo(to)).toBe(false);
  });

  it('answers is() for any of several states', () => {
    const lifecycle = at('restoring');
    expect(lifecycle.is('restoring', 'running')).toBe(true);
    expect(lifecycle.is('running', 'suspended')).toBe(false);
  });
});

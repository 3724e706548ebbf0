// The baseline the operator benchmark measures against: a straightforward per-event interpreter
// that walks the definition for every event (switch on operator type, split paths, string keys),
// the way an in-process pipeline engine is usually first written. Same semantics for the
// operators the benchmark uses (filter, map, branch, tumbling-window sum), no compilation.
import type { EventEnvelope, PipelineDefinition } from '@sluice/contracts';

type Obj = Record<string, unknown>;

function getPath(event: EventEnvelope, path: string): unknown {
  const parts = path.startsWith('$.') ? path.slice(2).split('.') : ['payload', ...path.split('.')];
  let value: unknown = event;
  for (const part of parts) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Obj)[part];
  }
  return value ?? undefined;
}

function setPath(event: EventEnvelope, path: string, value: unknown): void {
  const parts = path.startsWith('$.') ? path.slice(2).split('.') : ['payload', ...path.split('.')];
  let target = event as Obj;
  for (const part of parts.slice(0, -1)) target = (target[part] ??= {}) as Obj;
  target[parts[parts.length - 1]!] = value;
}

export class NaiveInterpreter {
  private readonly windows = new Map<
    string,
    { group: string; start: number; sum: number; count: number }
  >();
  private maxTime = -Infinity;
  emitted = 0;

  constructor(private readonly definition: PipelineDefinition) {}

  process(event: EventEnvelope, time: number): void {
    const definition = this.definition;
    if (time > this.maxTime) {
      this.maxTime = time;
      this.fire();
    }
    if (
      definition.source_event_types.length > 0 &&
      !definition.source_event_types.includes(event.event_type)
    )
      return;
    const working: EventEnvelope = { ...event, payload: { ...event.payload } };
    for (const operator of definition.operators) {
      switch (operator.type) {
        case 'filter': {
          const actual = getPath(working, operator.field);
          if (operator.op === 'eq' && actual !== operator.value) return;
          if (
            operator.op === 'gt' &&
            !(typeof actual === 'number' && actual > (operator.value as number))
          )
            return;
          break;
        }
        case 'map': {
          const actual = getPath(working, operator.field);
          const [name, operand] = operator.transform.split(':');
          if (name === 'uppercase' && typeof actual === 'string')
            setPath(working, operator.field, actual.toUpperCase());
          if (name === 'multiply' && typeof actual === 'number')
            setPath(working, operator.field, actual * Number(operand));
          break;
        }
        case 'branch': {
          const actual = getPath(working, operator.field);
          const route = typeof actual === 'string' ? operator.branches[actual] : undefined;
          if (route !== undefined) setPath(working, '_route', route);
          break;
        }
        case 'window': {
          const size = operator.config.size_seconds! * 1000;
          const start = Math.floor(time / size) * size;
          const group = String(
            getPath(working, operator.aggregation.group_by as string) ?? 'default',
          );
          const value = getPath(working, operator.aggregation.field!);
          if (typeof value !== 'number') return;
          const key = `${group}|${start}`;
          const window = this.windows.get(key) ?? { group, start, sum: 0, count: 0 };
          window.sum += value;
          window.count += 1;
          this.windows.set(key, window);
          return;
        }
        default:
          throw new Error(`the naive interpreter does not run ${operator.type}`);
      }
    }
    this.emitted += 1;
  }

  /** End of input: every open window fires. */
  flush(): void {
    this.maxTime = Infinity;
    this.fire();
  }

  private fire(): void {
    const windowOperator = this.definition.operators.find((o) => o.type === 'window');
    if (windowOperator?.type !== 'window') return;
    const size = windowOperator.config.size_seconds! * 1000;
    for (const [key, window] of this.windows) {
      if (window.start + size <= this.maxTime) {
        this.windows.delete(key);
        this.emitted += 1;
      }
    }
  }
}

// The checks of a definition that JSON Schema does not state: rules across fields, AllSource's
// nulls, and the topics the pipeline names and makes. They read the document as it came, not
// the validated shape, so that they run beside the shape's problems (a misspelt key must not
// hide that `slide_seconds` exceeds `size_seconds`): each rule looks only at values of the types
// it needs, and leaves the rest to the shape.
import { FILTER_OPS } from './definition';
import type { FilterOp } from './definition';
import { DEFAULT_SESSION_TIMEOUT_SECONDS } from './definition-defaults';
import { derivedTopics, reservedTopicProblem, topicNameProblem } from './topic-names';

export type Segments = Array<string | number>;

/** Durations stay within a century: window bounds must remain dates (docs/design.md §1). */
export const MAX_DURATION_SECONDS = 3_153_600_000;
/** The most windows a sliding window may put one event in. */
export const MAX_WINDOWS_PER_EVENT = 10_000;
const DURATIONS = [
  'size_seconds',
  'slide_seconds',
  'session_timeout_seconds',
  'allowed_lateness_seconds',
  'idle_timeout_seconds',
] as const;

export interface Finding {
  segments: Segments;
  message: string;
}

export interface DefinitionContext {
  /** SLUICE_TOPIC_PREFIX of the installation (default `sluice`). */
  topicPrefix: string;
  /** The processors' source topics (SOURCE_TOPICS): a pipeline may not write to them. */
  sourceTopics: readonly string[];
}

export interface Findings {
  errors: Finding[];
  warnings: Finding[];
}

type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
const isNumber = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value);

export function checkDefinition(input: unknown, context: DefinitionContext): Findings {
  const findings: Findings = { errors: [], warnings: [] };
  if (!isObject(input)) return findings;
  const operators = Array.isArray(input['operators']) ? input['operators'] : [];
  operators.forEach((operator, index) => {
    if (!isObject(operator)) return;
    const at = (path: Segments) => ['operators', index, ...path];
    checkOperator(operator, at, findings);
    const stateful = operator['type'] === 'reduce' || operator['type'] === 'window';
    if (stateful && index !== operators.length - 1) {
      findings.errors.push({
        segments: at(['type']),
        message: `a ${operator['type']} must be the last operator: its output is a result, not an event`,
      });
    }
  });
  checkTopics(input, operators, context, findings);
  return findings;
}

/** One operator's own rules; `at` places a path under the operator in the document. */
export function checkOperator(
  operator: Json,
  at: (path: Segments) => Segments,
  findings: Findings,
): void {
  const error = (path: Segments, message: string) =>
    findings.errors.push({ segments: at(path), message });
  switch (operator['type']) {
    case 'filter': {
      const { op, value } = operator;
      if (op === 'exists') {
        if (value !== undefined && typeof value !== 'boolean')
          error(['value'], 'must be true or false for exists');
      } else if (!FILTER_OPS.includes(op as FilterOp)) {
        return; // the shape names it
      } else if (value === undefined) {
        error(['value'], `is required for ${op}`);
      } else if (op === 'gt' || op === 'lt' || op === 'gte' || op === 'lte') {
        if (!isNumber(value)) error(['value'], `must be a finite number for ${op}`);
      } else if (op === 'in' && !Array.isArray(value)) {
        error(['value'], 'must be an array for in');
      }
      return;
    }
    case 'map': {
      const transform = operator['transform'];
      if (typeof transform !== 'string') return;
      const [, operand] = transform.split(':');
      if (operand !== undefined && operand !== '' && !Number.isFinite(Number(operand)))
        error(['transform'], 'must have a finite number after the colon');
      return;
    }
    case 'reduce':
      checkReduce(operator, [], error);
      return;
    case 'window':
      if (isObject(operator['config'])) checkWindowConfig(operator['config'], at, findings);
      if (isObject(operator['aggregation']))
        checkReduce(operator['aggregation'], ['aggregation'], error);
      return;
    default:
      return;
  }
}

function checkWindowConfig(config: Json, at: (path: Segments) => Segments, findings: Findings) {
  const error = (key: string, message: string) =>
    findings.errors.push({ segments: at(['config', key]), message });
  const warn = (key: string, message: string) =>
    findings.warnings.push({ segments: at(['config', key]), message });
  const type = config['window_type'];
  const { size_seconds: size, slide_seconds: slide, session_timeout_seconds: gap } = config;
  if (type === 'session') {
    if (gap === undefined) error('session_timeout_seconds', 'is required for a session window');
    if (gap === null)
      warn(
        'session_timeout_seconds',
        `is null: the session gap is AllSource's default, ${DEFAULT_SESSION_TIMEOUT_SECONDS} s`,
      );
    if (isNumber(slide)) warn('slide_seconds', 'is ignored by a session window');
  } else if (type === 'tumbling' || type === 'sliding') {
    if (size === undefined) error('size_seconds', `is required for a ${type} window`);
    if (type === 'sliding') {
      if (slide === undefined) error('slide_seconds', 'is required for a sliding window');
      if (slide === null) {
        const by = isNumber(size) ? ` (${size} s)` : '';
        warn(
          'slide_seconds',
          `is null: the window slides by its size_seconds${by}, AllSource's default`,
        );
      }
      if (isNumber(slide) && isNumber(size) && slide > size)
        error('slide_seconds', 'must not exceed size_seconds: records would fall between windows');
    } else if (isNumber(slide)) {
      warn('slide_seconds', 'is ignored by a tumbling window');
    }
    if (isNumber(gap)) warn('session_timeout_seconds', `is ignored by a ${type} window`);
  }
  for (const key of DURATIONS) {
    const seconds = config[key];
    if (!isNumber(seconds) || seconds <= 0) continue;
    if (seconds > MAX_DURATION_SECONDS) {
      error(key, `must be at most ${MAX_DURATION_SECONDS} (100 years)`);
    } else if (!Number.isInteger(seconds * 1000)) {
      error(key, 'must be a whole number of milliseconds');
    }
  }
  // An event lands in size / slide windows: past a bound, one event would stall a replica.
  if (
    type === 'sliding' &&
    isNumber(size) &&
    isNumber(slide) &&
    slide > 0 &&
    size / slide > MAX_WINDOWS_PER_EVENT
  )
    error(
      'slide_seconds',
      `puts each event in ${Math.ceil(size / slide)} windows; at most ${MAX_WINDOWS_PER_EVENT} (slide by at least size_seconds / ${MAX_WINDOWS_PER_EVENT})`,
    );
}

function checkReduce(
  reduce: Json,
  base: Segments,
  error: (path: Segments, message: string) => void,
): void {
  const fn = reduce['function'];
  if (typeof fn === 'string' && fn !== 'count' && reduce['field'] === undefined)
    error([...base, 'field'], `is required for ${fn}`);
}

function checkTopics(
  input: Json,
  operators: unknown[],
  context: DefinitionContext,
  findings: Findings,
): void {
  const error = (segments: Segments, message: string) =>
    findings.errors.push({ segments, message });
  operators.forEach((operator, index) => {
    if (!isObject(operator) || operator['type'] !== 'enrich') return;
    const source = operator['source'];
    if (typeof source !== 'string' || source === '') return;
    const problem = topicNameProblem(source);
    if (problem) error(['operators', index, 'source'], problem);
  });
  const output = input['output'];
  if (typeof output !== 'string' || output === '') return;
  const problem =
    topicNameProblem(output) ??
    reservedTopicProblem(output, context.topicPrefix, context.sourceTopics);
  if (problem) {
    error(['output'], problem);
    return;
  }
  const id = typeof input['id'] === 'string' ? input['id'] : '00000000-0000-0000-0000-000000000000';
  const stateful = operators.some(
    (operator) =>
      isObject(operator) && (operator['type'] === 'reduce' || operator['type'] === 'window'),
  );
  for (const { topic, from } of derivedTopics(id, output, stateful, context.topicPrefix)) {
    const derived = topicNameProblem(topic);
    if (derived)
      error(
        [from],
        `makes the topic ${topic.slice(0, 60)}${topic.length > 60 ? '…' : ''}, which ${derived}`,
      );
  }
}

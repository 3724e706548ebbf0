// The rules of a graph definition that JSON Schema does not state (headrace's `validate`): ids
// unique, every input resolving, no cycles, fan-out only where it is meant, a stateful node
// feeding only sinks, and the topics legal. Like the linear form's checks they read the document
// as it came, so they run beside the shape's problems and each looks only at what it needs.
import { checkOperator, isObject } from './definition-checks';
import type { DefinitionContext, Findings, Segments } from './definition-checks';
import { parseInput } from './graph-definition';
import { at } from './graph-nodes';
import type { Edge, Node, Section } from './graph-nodes';
import { checkJoins, inputsOf } from './join-checks';
import { lateTopic } from './topics';
import { reservedTopicProblem, topicNameProblem } from './topic-names';

type Json = Record<string, unknown>;
type ReportError = (segments: Segments, message: string) => void;

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

/** What a backfill or a replay may start from, as its error message says it. */
export const START_POINT =
  'earliest or an ISO-8601 time with its zone, such as 2026-11-01T00:00:00Z';

/** `earliest`, or an ISO-8601 time with its zone: where a backfill or a replay starts. */
export function isStartPoint(value: string): boolean {
  return value === 'earliest' || (ISO_TIME.test(value) && !Number.isNaN(Date.parse(value)));
}
/** Transforms whose output is results, not events. */
const STATEFUL = new Set(['reduce', 'window', 'join']);

const listOf = (input: Json, section: Section): unknown[] =>
  Array.isArray(input[section]) ? input[section] : [];

export function checkGraph(input: unknown, context: DefinitionContext): Findings {
  const findings: Findings = { errors: [], warnings: [] };
  if (!isObject(input)) return findings;
  const error = (segments: Segments, message: string) =>
    findings.errors.push({ segments, message });

  const nodes = new Map<string, Node>();
  for (const section of ['sources', 'transforms', 'sinks'] as const) {
    listOf(input, section).forEach((item, index) => {
      if (!isObject(item) || typeof item['id'] !== 'string') return;
      const node: Node = { section, index, id: item['id'], item };
      const earlier = nodes.get(node.id);
      if (earlier) {
        error(at(node, 'id'), `is already the id of ${earlier.section}[${earlier.index}]`);
        return;
      }
      nodes.set(node.id, node);
      if (section === 'transforms' && item['type'] !== 'join')
        checkOperator(item, (path) => at(node, ...path), findings);
    });
  }

  const edges = resolveInputs(nodes, error);
  checkFanOut(nodes, edges, error);
  checkCycles(nodes, error);
  checkJoins(nodes, edges, findings);
  for (const node of nodes.values()) {
    const readers = edges.get(node.id);
    if (node.section !== 'sinks' && !readers)
      findings.warnings.push({
        segments: at(node, 'id'),
        message: 'feeds no transform or sink: its records go nowhere',
      });
    if (!readers || node.item['type'] !== 'branch') continue;
    // Read by route only: a route nobody reads drops what the branch sends it.
    if (readers.some(({ input }) => parseInput(input).route === undefined)) continue;
    const read = new Set(readers.map(({ input }) => parseInput(input).route));
    for (const route of routesOf(node.item))
      if (!read.has(route))
        findings.warnings.push({
          segments: at(node, 'branches'),
          message: `sends events to the route ${route}, which nothing reads: they go nowhere`,
        });
  }
  checkSources(nodes, error);
  checkSinks(nodes, context, error);
  return findings;
}

/** Every input names a source, a transform, or a route of a branch; edges by producer id. */
function resolveInputs(nodes: Map<string, Node>, error: ReportError): Map<string, Edge[]> {
  const edges = new Map<string, Edge[]>();
  for (const consumer of nodes.values()) {
    if (consumer.section === 'sources') continue;
    for (const { input, path } of inputsOf(consumer.item)) {
      const { node: id, route } = parseInput(input);
      const producer = nodes.get(id);
      const where = at(consumer, ...path);
      if (!producer) {
        error(where, `names no source or transform (${known(nodes)})`);
        continue;
      }
      if (producer.section === 'sinks') {
        error(where, `is a sink (sinks[${producer.index}]): a sink has no output to read`);
        continue;
      }
      if (route !== undefined) {
        if (producer.item['type'] !== 'branch') {
          error(where, `addresses a route of ${id}, which is not a branch`);
          continue;
        }
        const routes = routesOf(producer.item);
        if (!routes.includes(route)) {
          error(where, `names no route of the branch ${id} (its routes: ${routes.join(', ')})`);
          continue;
        }
      }
      const list = edges.get(id) ?? [];
      list.push({ consumer, input, path });
      edges.set(id, list);
    }
  }
  return edges;
}

/**
 * A transform's output is one stream with one reader, so a second reader is a mistake, not a
 * copy; a source or a branch is where a stream is meant to split. A reduce or window emits
 * results, not events: only sinks read it.
 */
function checkFanOut(nodes: Map<string, Node>, edges: Map<string, Edge[]>, error: ReportError) {
  for (const [id, list] of edges) {
    const producer = nodes.get(id)!;
    const type = producer.item['type'];
    const stateful = producer.section === 'transforms' && STATEFUL.has(type as string);
    if (stateful) {
      for (const { consumer, path } of list)
        if (consumer.section !== 'sinks')
          error(
            at(consumer, ...path),
            `reads the ${type} ${id}, whose output is results, not events: only sinks may read it`,
          );
    }
    if (producer.section === 'sources' || type === 'branch') continue;
    const [first, ...more] = list;
    for (const { consumer, path } of more)
      if (!stateful || consumer.section === 'sinks')
        error(
          at(consumer, ...path),
          `reads ${id}, which ${first!.consumer.section}[${first!.consumer.index}] reads already: only a source or a branch may feed several`,
        );
  }
}

/** Transforms whose inputs lead back to themselves, reported once per cycle at its first member. */
function checkCycles(
  nodes: Map<string, Node>,
  error: (segments: Segments, message: string) => void,
): void {
  const upstreamOf = (node: Node): Node | undefined => {
    const input = node.item['input'];
    return typeof input === 'string' ? nodes.get(parseInput(input).node) : undefined;
  };
  const settled = new Set<string>();
  for (const start of nodes.values()) {
    if (start.section !== 'transforms' || settled.has(start.id)) continue;
    // One input per transform: the walk upstream is a path, and a cycle is a repeat on it.
    const path: Node[] = [];
    const onPath = new Map<string, number>();
    let node: Node | undefined = start;
    while (node && node.section === 'transforms' && !settled.has(node.id)) {
      if (onPath.has(node.id)) {
        const cycle = path.slice(onPath.get(node.id));
        const first = cycle.reduce((a, b) => (b.index < a.index ? b : a));
        // In the direction records flow, from the member the problem is reported at.
        const flow = [...cycle].reverse().map((member) => member.id);
        const from = flow.indexOf(first.id);
        const names = [...flow.slice(from), ...flow.slice(0, from), first.id];
        error(at(first, 'input'), `makes a cycle: ${names.join(' → ')}`);
        break;
      }
      onPath.set(node.id, path.length);
      path.push(node);
      node = upstreamOf(node);
    }
    for (const member of path) settled.add(member.id);
  }
}

function checkSources(
  nodes: Map<string, Node>,
  error: (segments: Segments, message: string) => void,
): void {
  // A pipeline has one position in a partition: two sources of one topic start at one point.
  const firstOfTopic = new Map<string, { node: Node; start: string }>();
  for (const node of nodes.values()) {
    if (node.section !== 'sources') continue;
    const { topic, start } = node.item;
    if (typeof topic === 'string' && topic !== '') {
      const problem = topicNameProblem(topic);
      if (problem) error(at(node, 'topic'), problem);
    }
    if (typeof start === 'string' && start !== 'latest' && !isStartPoint(start))
      error(at(node, 'start'), `must be latest, ${START_POINT}`);
    if (typeof topic !== 'string' || (start !== undefined && typeof start !== 'string')) continue;
    const starts = start ?? (node.item['as'] === 'table' ? 'earliest' : 'latest');
    const first = firstOfTopic.get(topic);
    if (!first) firstOfTopic.set(topic, { node, start: starts });
    else if (first.start !== starts)
      error(
        at(node, start === undefined ? 'topic' : 'start'),
        `starts ${topic} at ${starts}, but source ${first.node.id} reads it from ${first.start}: the sources of one topic share its start`,
      );
  }
}

function checkSinks(
  nodes: Map<string, Node>,
  context: DefinitionContext,
  error: (segments: Segments, message: string) => void,
): void {
  // A graph's own sources are what it may not write: other topics may well feed other pipelines.
  const ownSources = [...nodes.values()]
    .filter((node) => node.section === 'sources')
    .map((node) => node.item['topic'])
    .filter((topic): topic is string => typeof topic === 'string');
  for (const node of nodes.values()) {
    const topic = node.item['topic'];
    if (node.section !== 'sinks' || typeof topic !== 'string' || topic === '') continue;
    const problem =
      topicNameProblem(topic) ?? reservedTopicProblem(topic, context.topicPrefix, ownSources);
    if (problem) {
      error(
        at(node, 'topic'),
        problem.replace('a source topic of the processors', "one of this pipeline's sources"),
      );
      continue;
    }
    const late = topicNameProblem(lateTopic(topic));
    if (late)
      error(at(node, 'topic'), `makes the topic ${lateTopic(topic).slice(0, 60)}…, which ${late}`);
  }
}

function routesOf(branch: Json): string[] {
  const branches = branch['branches'];
  if (!isObject(branches)) return [];
  return [...new Set(Object.values(branches).filter((v): v is string => typeof v === 'string'))];
}

function known(nodes: Map<string, Node>): string {
  const ids = [...nodes.values()].filter((n) => n.section !== 'sinks').map((n) => n.id);
  if (ids.length === 0) return 'there are none';
  const shown = ids.slice(0, 10).join(', ');
  return `known: ${shown}${ids.length > 10 ? `, and ${ids.length - 10} more` : ''}`;
}

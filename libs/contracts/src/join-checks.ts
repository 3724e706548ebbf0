// The rules of joins and table sources that JSON Schema does not state: which inputs make which
// join, the options each kind takes, and where a table may be read. Like the other graph checks
// they read the document as it came, each looking only at values of the types it needs.
import { isObject } from './definition-checks';
import type { Findings, Segments } from './definition-checks';
import { at } from './graph-nodes';
import type { Edge, Node } from './graph-nodes';
import { parseInput } from './graph-definition';
import { JOIN_RESULT_FIELDS } from './join-definition';

type Json = Record<string, unknown>;
type ReportError = (segments: Segments, message: string) => void;

/** The inputs a transform or sink names, each with where it names it. */
export function inputsOf(item: Json): Array<{ input: string; path: Segments }> {
  if (item['type'] === 'join' && Array.isArray(item['inputs']))
    return item['inputs'].flatMap((input, index) =>
      typeof input === 'string' && input !== '' ? [{ input, path: ['inputs', index] }] : [],
    );
  const input = item['input'];
  return typeof input === 'string' && input !== '' ? [{ input, path: ['input'] }] : [];
}

const isTable = (node: Node | undefined) =>
  node?.section === 'sources' && node.item['as'] === 'table';

export function checkJoins(
  nodes: Map<string, Node>,
  edges: Map<string, Edge[]>,
  findings: Findings,
): void {
  const error: ReportError = (segments, message) => findings.errors.push({ segments, message });
  for (const node of nodes.values()) {
    if (node.section === 'sources' && node.item['as'] !== 'table' && node.item['key'] !== undefined)
      error(at(node, 'key'), 'applies to a table source (as: table) only');
    if (!isTable(node)) continue;
    // A table is a lookup, not a stream: it has no events to pass on.
    for (const { consumer, path } of edges.get(node.id) ?? [])
      if (consumer.item['type'] !== 'join' || path[1] !== 1)
        error(
          at(consumer, ...path),
          `reads the table ${node.id}: a table source can only be the right input of a join`,
        );
  }
  for (const node of nodes.values())
    if (node.section === 'transforms' && node.item['type'] === 'join') {
      checkJoin(node, nodes, error);
      warnOfQuietTable(node, nodes, findings);
    }
}

/**
 * A table join waits for both inputs' event time, and a table that stops changing stops its
 * own: without an idle timeout every stream record waits until the table's partitions move.
 */
function warnOfQuietTable(node: Node, nodes: Map<string, Node>, findings: Findings): void {
  const inputs = Array.isArray(node.item['inputs']) ? node.item['inputs'] : [];
  const right = typeof inputs[1] === 'string' ? nodes.get(parseInput(inputs[1]).node) : undefined;
  if (!isTable(right) || node.item['idle_timeout_seconds'] !== undefined) return;
  findings.warnings.push({
    segments: at(node, 'idle_timeout_seconds'),
    message: `is not set: a record waits until the event time of every partition of the table ${right!.id} passes it, and a table that stops changing holds every record back until its partitions' time moves (tick them, or give the seconds after which a quiet input is left out; under load a busy partition can then be left out too, and its records come late)`,
  });
}

function checkJoin(node: Node, nodes: Map<string, Node>, error: ReportError): void {
  const join = node.item;
  const inputs = Array.isArray(join['inputs']) ? join['inputs'] : [];
  const [left, right] = inputs.map((input) =>
    typeof input === 'string' ? nodes.get(parseInput(input).node) : undefined,
  );
  if (typeof inputs[0] === 'string' && inputs[0] === inputs[1])
    error(at(node, 'inputs', 1), 'is the left input too: give each side a source of its own');
  // A table on the left is refused where it is read: which join this would be is moot.
  if (left !== undefined && right !== undefined && !isTable(left)) {
    if (isTable(right)) checkTableJoin(node, right, error);
    else checkIntervalJoin(node, right, error);
  }
  const select = join['select'];
  if (isObject(select))
    for (const name of Object.keys(select))
      if ((JOIN_RESULT_FIELDS as readonly string[]).includes(name))
        error(at(node, 'select', name), 'is a field every join result has; name it otherwise');
}

function checkTableJoin(node: Node, table: Node, error: ReportError): void {
  // One place says what a row's key is: the table's own `key`.
  if (isObject(node.item['on']))
    error(
      at(node, 'on'),
      `must be the left input's key path: the rows of the table ${table.id} are keyed by its key (${String(table.item['key'] ?? '$.entity_id')})`,
    );
  for (const key of ['within_seconds', 'before_seconds', 'after_seconds', 'kind'])
    if (node.item[key] !== undefined)
      error(
        at(node, key),
        key === 'kind'
          ? 'applies to a join of two streams; a table join keeps a record with no row by on_missing: emit'
          : `applies to a join of two streams; ${table.id} is a table, joined at each record's event time`,
      );
}

function checkIntervalJoin(node: Node, right: Node, error: ReportError): void {
  const has = (key: string) => node.item[key] !== undefined;
  if (has('on_missing'))
    error(at(node, 'on_missing'), `applies to a table join; ${right.id} is a stream`);
  const bounds = has('before_seconds') || has('after_seconds');
  if (has('within_seconds') && bounds)
    error(
      at(node, 'within_seconds'),
      'is given with before_seconds/after_seconds: give one or the other',
    );
  else if (!has('within_seconds') && !bounds)
    error(
      at(node, 'within_seconds'),
      'is required for a join of two streams (or before_seconds and after_seconds)',
    );
}
